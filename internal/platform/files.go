package platform

import (
	"encoding/json"
	"time"
)

// File statuses (spec section 3).
const (
	FileUploadPending   = "upload_pending"
	FileUploadFailed    = "upload_failed"
	FileUploadCompleted = "upload_completed"
	FileIndexPending    = "indexing_pending"
	FileIndexFailed     = "indexing_failed"
	FileIndexCompleted  = "indexing_completed"
)

// Access policies of a file.
const (
	PolicyIntegrations  = "integrations"
	PolicyPublicContent = "public_content"
)

// File is a file of a bot. Its content lives in the blob store under
// BlobKey once uploaded; Generation changes at every upsert, so upload URLs
// of replaced content stop working.
type File struct {
	ID             string
	BotID          string
	WorkspaceID    string
	Scope          string // "" for the bot's own keys, else the integration the key belongs to
	Key            string
	Status         string
	Size           *int64
	DeclaredSize   int64
	ContentType    string
	Tags           map[string]string
	Metadata       map[string]any
	AccessPolicies []string
	Index          bool
	PublicNow      bool // publicContentImmediatelyAccessible
	FailedReason   string
	IndexingStack  string
	ExpiresAt      *time.Time
	Owner          FileOwner
	Generation     int64
	BlobKey        string
	SHA256         string
	Counted        bool // Size is counted in the workspace's storage usage
	// ExtraBytes are the bytes of what indexing stored besides the content
	// (page images of vision.indexPages), counted in File Storage.
	ExtraBytes int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Has reports whether the file has the access policy p.
func (f File) Has(p string) bool {
	for _, x := range f.AccessPolicies {
		if x == p {
			return true
		}
	}
	return false
}

// FileOwner is who created a file: the bot, an integration, or a user.
type FileOwner struct {
	Type  string `json:"type"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Alias string `json:"alias,omitempty"`
}

// Storage is a workspace's storage usage and limits, in bytes.
type Storage struct {
	FileBytes      int64
	VectorBytes    int64
	MaxFileBytes   *int64 // nil: the plan's default
	MaxStorage     *int64
	MaxVectorBytes *int64
}

// Job is a unit of background work (for example indexing a file).
type Job struct {
	ID        string
	Kind      string
	Subject   string
	Payload   json.RawMessage
	Status    string
	Attempts  int
	RunAfter  time.Time
	CreatedAt time.Time
	// Owner is the bot whose code queued the job (scheduled events),
	// counted against its cap; empty for others. Only EnqueueJob uses it.
	Owner string
}

// JobIndexFile is the kind of the job that indexes an uploaded file.
const JobIndexFile = "index_file"

// MaxIndexBytes is the largest file that can be indexed (spec 4.1, 8): a
// larger one is refused at upsert with index true, and not read further by
// indexing.
const MaxIndexBytes = 95 << 20

// ReleaseNode is whose jobs a process starting up hands back (the node
// argument of Store.ReleaseJobs): its own (node), or everyone's ("") when
// it owns the database alone.
func ReleaseNode(node string, ownsDatabase bool) string {
	if ownsDatabase {
		return ""
	}
	return node
}
