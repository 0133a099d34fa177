// Package doc is the structure parsers extract from a file and the chunker
// cuts into passages: a flat list of blocks, in reading order.
package doc

// Block kinds. A heading's Level is 1 for the top level (the title), 2 for
// the next, and so on; other blocks have Level 0.
const (
	Heading    = "heading"
	Paragraph  = "paragraph"
	List       = "list"
	Table      = "table"
	Code       = "code"
	Blockquote = "blockquote"
)

// Block is one structural element of a document.
type Block struct {
	Kind  string
	Level int
	// Text is the block's plain text. A list holds one item per line
	// ("- item"); a table one row per line, cells separated by " | ".
	Text string
	// Page is the 1-based page the block starts on, for paged formats
	// (PDF); 0 otherwise.
	Page int
}

// Document is a parsed file.
type Document struct {
	Blocks []Block
}
