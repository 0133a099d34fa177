package blob

// CopyBufSize is the buffer an FS Put copies through, for the tests.
const CopyBufSize = copyBufSize

// SetLink replaces how s hard-links, so that tests can make it fail.
func SetLink(s *FS, link func(oldname, newname string) error) { s.link = link }
