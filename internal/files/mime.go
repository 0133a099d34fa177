package files

// mimeTypes maps file extensions to MIME types (IANA media types, with the
// names browsers and the common mime.types files use). It is compiled in so
// that inference does not depend on the host's /etc/mime.types.
var mimeTypes = map[string]string{
	// text
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".html": "text/html", ".htm": "text/html", ".css": "text/css",
	".xml": "application/xml", ".ics": "text/calendar", ".vtt": "text/vtt", ".srt": "application/x-subrip", ".rtf": "application/rtf",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml", ".ini": "text/plain", ".sql": "application/sql",
	// code and data
	".json": "application/json", ".jsonl": "application/jsonl", ".ndjson": "application/x-ndjson", ".geojson": "application/geo+json",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".ts": "video/mp2t", // MPEG transport stream, as in the IANA registry
	".wasm": "application/wasm", ".sh": "application/x-sh", ".py": "text/x-python", ".go": "text/x-go", ".java": "text/x-java-source",
	".c": "text/x-c", ".h": "text/x-c", ".cpp": "text/x-c", ".rb": "text/x-ruby", ".php": "application/x-httpd-php",
	// documents
	".pdf": "application/pdf", ".doc": "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls":  "application/vnd.ms-excel", ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".ppt": "application/vnd.ms-powerpoint", ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
	".odp": "application/vnd.oasis.opendocument.presentation", ".epub": "application/epub+zip",
	// images
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".jpe": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".svg": "image/svg+xml", ".svgz": "image/svg+xml", ".bmp": "image/bmp", ".ico": "image/vnd.microsoft.icon", ".tif": "image/tiff",
	".tiff": "image/tiff", ".avif": "image/avif", ".heic": "image/heic", ".heif": "image/heif",
	// audio
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/opus", ".flac": "audio/flac",
	".aac": "audio/aac", ".m4a": "audio/mp4", ".weba": "audio/webm", ".mid": "audio/midi", ".midi": "audio/midi",
	// video
	".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg", ".mov": "video/quicktime",
	".avi": "video/x-msvideo", ".mkv": "video/x-matroska", ".mpeg": "video/mpeg", ".mpg": "video/mpeg", ".3gp": "video/3gpp",
	// archives and fonts
	".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip", ".tar": "application/x-tar",
	".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".7z": "application/x-7z-compressed", ".rar": "application/vnd.rar",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	// other
	".bin": "application/octet-stream", ".exe": "application/vnd.microsoft.portable-executable", ".apk": "application/vnd.android.package-archive",
	".eml": "message/rfc822", ".msg": "application/vnd.ms-outlook",
}
