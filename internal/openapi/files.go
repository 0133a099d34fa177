package openapi

// The Files API (compat-notes §2.2, docs/files-api.md, docs/indexing.md)
// and the content URLs its files hand out.

var fileResult = wrap("file", ref("File"))

// signed are the query parameters of a signed URL, as the server hands it
// out in a file's url or uploadUrl.
var signed = []parameter{
	required(query("gen", str, "the file's generation the URL is for")),
	required(query("expires", str, "when the URL stops working (Unix seconds)")),
	required(query("signature", str, "the server's signature of the URL")),
}

// ranges are the answers of a content download beyond 200: a range of it,
// or a conditional request's.
var ranges = obj{
	"206": obj{"description": "the range asked for (Range)", "content": obj{"*/*": obj{"schema": obj{}}}},
	"304": notModified["304"],
	"416": obj{"description": "the range asked for is not in the content"},
}

var contentHeaders = obj{
	"ETag":          obj{"schema": str, "description": "the content's SHA-256"},
	"Cache-Control": obj{"schema": str},
}

var _ = describe(map[string]op{
	"upsertFile": {summary: "Create a file, or replace the one of that key", returns: "the file, with the uploadUrl to PUT its content to",
		result: fileResult, errs: []int{403, 409, 413}},
	"listFiles": {summary: "The bot's files", result: list("files", ref("File")), params: with(page,
		query("ids", array(str), "only these files (at most 50)"),
		tagFilter,
		query("indexed", boolean, "only files indexed (true) or not (false)"),
		query("sortField", enum("key", "size", "createdAt", "updatedAt", "status"), ""),
		query("sortDirection", enum("asc", "desc"), ""))},
	"getFile":            {summary: "A file, by id or key", result: fileResult},
	"updateFileMetadata": {summary: "Change a file's metadata, tags, access policies or expiry", result: fileResult},
	"deleteFile":         {summary: "Delete a file and its content", result: empty},
	"copyFile": {summary: "Copy a file to another key, of this bot or another", result: fileResult,
		params: []parameter{header("x-destination-bot-id", "the bot to copy to; this one by default")}, errs: []int{403, 409, 413}},
	"listFileTags":      {summary: "The tag keys of the bot's files", result: list("tags", str), params: page},
	"listFileTagValues": {summary: "The values of one tag key", result: list("values", str), params: page},
	"searchFiles": {summary: "Search the bot's indexed files", returns: "the passages that answer best, best first (one page)",
		result: wrap("passages", array(ref("SearchPassage"))), params: []parameter{
			required(query("query", obj{"type": "string", "maxLength": 4096}, "what to search for")),
			tagFilter,
			query("limit", obj{"type": "integer", "minimum": 1, "maximum": 50}, "how many passages at most (10 by default)"),
			query("contextDepth", obj{"type": "integer", "minimum": 0, "maximum": 10}, "how many passages of context around each (1 by default)"),
			query("consolidate", boolean, ""), query("includeBreadcrumb", boolean, ""), query("withContext", boolean, ""),
			query("explain", boolean, "this server's: add each passage's score breakdown (docs/indexing.md#why-a-passage-ranked-where-it-did)")}},
	"listFilePassages": {summary: "The passages a file was indexed into", result: list("passages", ref("Passage")),
		params: with(page, query("limit", obj{"type": "integer", "minimum": 1, "maximum": 200}, "passages per page (20 by default)"))},
	"setFilePassages": {summary: "Index a file with the caller's own passages",
		returns: "{}; the file is indexed in the background (status indexing_pending, then indexing_completed or indexing_failed)",
		result:  empty, errs: []int{403}},
	"createKnowledgeBase": {summary: "Create a knowledge base", result: wrap("knowledgeBase", ref("KnowledgeBase")), errs: []int{409}},
	"listKnowledgeBases": {summary: "The bot's knowledge bases", result: list("knowledgeBases", ref("KnowledgeBase")),
		params: with(page, tagFilter)},
	"updateKnowledgeBase": {summary: "Rename a knowledge base or change its tags", result: wrap("knowledgeBase", ref("KnowledgeBase"))},
	"deleteKnowledgeBase": {summary: "Delete a knowledge base", result: empty},

	"uploadFileContent": {summary: "Upload a file's content to its uploadUrl",
		description: "The URL is signed and carries no other credentials; the request body is the content itself.",
		raw:         true, params: with(signed,
			query("tagging", str, "public=true when the content is public at once"),
			header("x-amz-tagging", "public=true, as the official client sends it for publicContentImmediatelyAccessible")),
		media: noBody, returns: "the content is stored", headers: obj{"ETag": obj{"schema": str, "description": "the content's SHA-256"}},
		errs: []int{403, 404, 413}},
	"getFileContent": {summary: "Download a file's content from its signed url (or a passage's image)",
		description: "Range and conditional requests are answered (206, 304).",
		params:      with(signed, query("passage", str, "the passage whose image to answer, instead of the content")),
		media:       "*/*", returns: "the content", headers: contentHeaders, errs: []int{403, 404}, other: ranges},
	"getPublicFileContent": {summary: "Download the content of a file whose access policies include public_content",
		description: "Range and conditional requests are answered (206, 304).",
		media:       "*/*", returns: "the content", headers: contentHeaders, errs: []int{404}, other: ranges},
})

// filesCallerHeaders are what a Files API call may say of its caller
// besides its credentials (compat-notes §2.2, spec 4.1): the integration it
// acts as, and the end user it acts for.
var filesCallerHeaders = []parameter{
	header("x-integration-id", "the integration the call acts as (its files have their own key space)"),
	header("x-integration-alias", "the integration the call acts as, by its alias in the bot"),
	header("x-integration-name", "the integration the call acts as, by its name"),
	header("x-user-id", "the end user the call acts for"),
	header("x-user-role", "the end user's role"),
}
