// A raw Admin API request, for what the official client cannot send
// (setting quotas or a workspace's plan): the server's bootstrap token, the
// workspace header, a JSON body. Returns the response, its text and its
// JSON (undefined when the body is not JSON).
export async function adminFetch(server, path, { method = 'GET', body, workspaceId = server.workspaceId } = {}) {
  const res = await fetch(server.apiUrl + path, {
    method,
    headers: {
      Authorization: `Bearer ${server.token}`,
      'x-workspace-id': workspaceId,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { res, text, json }
}
