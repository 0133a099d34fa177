// The official web chat's full page, as botplatform serves it at
// /webchat/official/<webhookId>: the React component of @botpress/webchat,
// unchanged, filling the page. Its script tag's data attributes say which
// Chat API to talk to (data-api-url, data-client-id) and how to present the
// bot (data-bot-name, data-bot-avatar, data-color).
import React from 'react'
import { createRoot } from 'react-dom/client'
import { Webchat } from '@botpress/webchat'
// The package ships its style sheet without exporting it: taken by path.
import '../node_modules/@botpress/webchat/dist/style.css'

const d = document.currentScript?.dataset ?? {}
const root = document.createElement('div')
root.style.cssText = 'position:fixed;inset:0'
document.body.appendChild(root)

const configuration = { botName: d.botName || 'Chat', allowFileUpload: true, feedbackEnabled: true }
if (d.botAvatar) configuration.botAvatar = d.botAvatar
if (d.color) configuration.color = d.color

createRoot(root).render(<Webchat apiUrl={d.apiUrl} clientId={d.clientId} configuration={configuration} />)
