package platform

// Passage types (meta.type of a search passage).
const (
	PassageChunk   = "chunk"
	PassageSummary = "summary"
	PassageImage   = "image"
)

// Passage is a piece of an indexed file that search returns: its text, where
// it sits in the file, and its embedding.
type Passage struct {
	ID         string
	Seq        int64 // order of storage
	FileID     string
	BotID      string
	Position   int
	Content    string
	Type       string // chunk, summary, consolidated, image
	Subtype    string // title, subtitle, paragraph, blockquote, list, table, code, image, page
	PageNumber int
	Breadcrumb []string
	// Questions are questions the passage answers, written by the model
	// when the server indexes with --ai-index-questions; a full-text field
	// of their own, never returned by the API.
	Questions []string
	Vector    []float32
	// ImageType is the MIME type of the passage's image (a page indexed as
	// an image), "" for text passages. Image is only read on request.
	ImageType string
	Image     []byte
}

// IndexJob is the payload of a JobIndexFile job: the file and the
// generation of its content to index; with Own, Passages are the caller's
// own (setFilePassages), indexed instead of the content.
type IndexJob struct {
	FileID     string       `json:"fileId"`
	Generation int64        `json:"generation"`
	Own        bool         `json:"own,omitempty"`
	Passages   []OwnPassage `json:"passages,omitempty"`
}

// OwnPassage is a passage given by setFilePassages.
type OwnPassage struct {
	Content    string `json:"content"`
	Type       string `json:"type,omitempty"`
	PageNumber int    `json:"pageNumber,omitempty"`
}
