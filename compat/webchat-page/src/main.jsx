// The page of a site that embeds the official web chat: the React component
// of @botpress/webchat 4.5.2, unchanged, pointed at a bot's Chat API on
// botplatform. The page's query names the Chat API's base (apiUrl) and the
// bot's chat webhook id (clientId).
import React from 'react'
import { createRoot } from 'react-dom/client'
import { Webchat } from '@botpress/webchat'
// The package ships its style sheet without exporting it: taken by path.
import '../node_modules/@botpress/webchat/dist/style.css'

const q = new URLSearchParams(location.search)
const apiUrl = q.get('apiUrl')
const clientId = q.get('clientId')

createRoot(document.getElementById('root')).render(
  <div style={{ width: '100vw', height: '100vh' }}>
    <Webchat
      apiUrl={apiUrl}
      clientId={clientId}
      configuration={{ botName: 'Shop assistant', allowFileUpload: true, feedbackEnabled: true, composerPlaceholder: 'Ask the shop' }}
    />
  </div>
)
