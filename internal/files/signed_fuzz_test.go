package files

import (
	"net/url"
	"testing"
)

// FuzzVerifySignedURL signs a URL's fields, then builds other URLs from
// them: one from a raw query string (parsed as the HTTP layer does) and
// others that move bytes across the boundaries between fields. Each is
// given the honest signature; none may verify unless it carries exactly
// the honest fields, for the honest kind.
func FuzzVerifySignedURL(f *testing.F) {
	f.Add(false, "file_1", "3", "1893456000", "", "psg_1", false, "file_1", "gen=3&expires=1893456000&tagging=passage%3Dpsg_1")
	f.Add(true, "file_1", "1", "1893456000", "public=true", "", true, "file_1", "gen=1&expires=1893456000&passage=true")
	f.Add(false, "file_1", "12", "1893456000", "", "", false, "file_12", "gen=&expires=1893456000")
	f.Add(false, "file_1", "1", "2", "", "", true, "file_1", "gen=1&expires=2")
	f.Add(true, "file_1", "1", "1893456000", "", "", false, "file_1", "gen=1&expires=1893456000&tagging=%00")
	f.Fuzz(func(t *testing.T, upload bool, id, gen, exp, tagging, passage string, forgedUpload bool, forgedID, forgedQuery string) {
		s := &Service{secret: []byte("0123456789abcdef0123456789abcdef")}
		kind := kindOf(upload)
		honest := SignedRequest{FileID: id, Gen: gen, Expires: exp, Tagging: tagging, Passage: passage}
		honest.Signature = s.signature(kind, honest)
		if !s.signed(kind, honest) {
			t.Fatalf("an honest %s URL does not verify: %q", kind, honest)
		}
		check := func(what, forgedKind string, forged SignedRequest) {
			forged.Signature = honest.Signature
			if s.signed(forgedKind, forged) && (forgedKind != kind || forged != honest) {
				t.Fatalf("%s: a %s URL %q verifies with the signature of the %s URL %q", what, forgedKind, forged, kind, honest)
			}
		}
		q, _ := url.ParseQuery(forgedQuery)
		check("query", kindOf(forgedUpload), ParseSigned(forgedID, q))
		// Every boundary between two neighbouring fields, moved.
		fields := []*string{&honest.FileID, &honest.Gen, &honest.Expires, &honest.Tagging, &honest.Passage}
		for i := 0; i+1 < len(fields); i++ {
			joined := *fields[i] + *fields[i+1]
			for cut := 0; cut <= len(joined) && cut <= 64; cut++ {
				forged := honest
				moved := []*string{&forged.FileID, &forged.Gen, &forged.Expires, &forged.Tagging, &forged.Passage}
				*moved[i], *moved[i+1] = joined[:cut], joined[cut:]
				check("moved boundary", kind, forged)
			}
		}
	})
}

func kindOf(upload bool) string {
	if upload {
		return "upload"
	}
	return "content"
}
