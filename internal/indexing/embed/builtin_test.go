package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/botplatform/botplatform/internal/indexing/stem"
)

var _ Embedder = (*Builtin)(nil)
var _ Embedder = (*OpenAI)(nil)

func embedAll(t testing.TB, e Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestBuiltinNameDim(t *testing.T) {
	b := NewBuiltin()
	if b.Name() != "builtin-hash-256" || b.Dim() != 256 {
		t.Fatalf("%s %d", b.Name(), b.Dim())
	}
	if vs := embedAll(t, b); len(vs) != 0 {
		t.Fatal("vectors for no text")
	}
}

// TestBuiltinDeterministic checks one vector against a digest recorded
// once: the vectors must not change between runs, platforms or versions
// without a change of name.
func TestBuiltinDeterministic(t *testing.T) {
	b := NewBuiltin()
	text := "How to receive a payment from a customer's account: don't retry — naïve café 日本語のテキスト 2024."
	a := embedAll(t, b, text, "other text", text)
	if fmt.Sprint(a[0]) != fmt.Sprint(a[2]) {
		t.Fatal("same text, different vectors")
	}
	// Concurrent use gives the same vectors.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := embedAll(t, b, "x y z", text)
			if fmt.Sprint(v[1]) != fmt.Sprint(a[0]) {
				t.Error("concurrent vectors differ")
			}
		}()
	}
	wg.Wait()
	h := fnv.New64a()
	for _, x := range a[0] {
		// Rounded, so that a last-bit difference in float arithmetic would
		// not matter; a change of features would.
		fmt.Fprintf(h, "%.5f,", x)
	}
	if got := fmt.Sprintf("%x", h.Sum64()); got != builtinDigest {
		t.Fatalf("vector digest %s, recorded %s: the builtin embedder's vectors changed; if on purpose, change BuiltinName and the digest", got, builtinDigest)
	}
}

const builtinDigest = "f249ef9871811617"

func TestBuiltinNormalized(t *testing.T) {
	b := NewBuiltin()
	vs := embedAll(t, b, "one", "A longer text with many words, repeated words, repeated words.", strings.Repeat("payment ", 1000), "", "the of and", "!!! ...")
	for i, v := range vs {
		if len(v) != 256 {
			t.Fatalf("vector %d has %d dimensions", i, len(v))
		}
		n := norm(v)
		if i < 3 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("vector %d has norm %v", i, n)
		}
		if i >= 3 && n != 0 {
			t.Fatalf("featureless text %d has norm %v", i, n)
		}
	}
	if c := Cosine(vs[3], vs[0]); c != 0 {
		t.Fatalf("zero vector cosine %v", c)
	}
}

func TestBuiltinSimilarity(t *testing.T) {
	b := NewBuiltin()
	vs := embedAll(t, b,
		"How do I receive a payment from a customer?",
		"Customers can send payments, and you receive them in your account.",
		"The weather in Paris is sunny with light winds today.",
		"Install the server on Linux with the package manager.",
	)
	same := Cosine(vs[0], vs[1])
	for _, other := range vs[2:] {
		if c := Cosine(vs[0], other); c >= same-0.2 {
			t.Fatalf("related %.3f, unrelated %.3f", same, c)
		}
	}
}

func TestBuiltinTypos(t *testing.T) {
	b := NewBuiltin()
	unrelated := []string{
		"The weather in Paris is sunny with light winds.",
		"Install the server on Linux with the package manager.",
		"Bots can schedule jobs with cron expressions.",
		"Our refund policy covers purchases made within 30 days.",
		"He runs every morning before work.",
		"Tokens expire after one hour.",
	}
	for _, c := range []struct{ query, target string }{
		{"recieve paymnet", "How to receive a payment from a customer"},
		{"recieve paymnet", "receive payment"},
		{"pasword reset", "To reset your password, open the account settings."},
		{"webhok signatre", "Each webhook request carries an HMAC signature header."},
	} {
		vs := embedAll(t, b, append([]string{c.query, c.target}, unrelated...)...)
		right := Cosine(vs[0], vs[1])
		if right < 0.15 {
			t.Errorf("%q ~ %q only %.3f", c.query, c.target, right)
		}
		for i, u := range vs[2:] {
			if c2 := Cosine(vs[0], u); c2 >= right {
				t.Errorf("%q: %q %.3f >= %q %.3f", c.query, unrelated[i], c2, c.target, right)
			}
		}
	}
}

func TestBuiltinStemming(t *testing.T) {
	for _, group := range [][]string{
		{"run", "runs", "running"},
		{"receive", "received", "receives", "receiving"},
		{"payment", "payments"},
		{"index", "indexes", "indexed", "indexing"},
		{"class", "classes"},
		{"match", "matches", "matched"},
		{"policy", "policies"},
		{"apply", "applied", "applies"},
		{"stop", "stopped", "stopping", "stops"},
		{"fail", "failed", "failing", "fails"},
		{"create", "created", "creating", "creates"},
		{"agree", "agreed", "agreeing"},
		{"process", "processes", "processed", "processing"},
	} {
		want := stem.String(group[0])
		for _, w := range group[1:] {
			if got := stem.String(w); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, got, group[0], want)
			}
		}
	}
	for _, w := range []string{"sing", "bring", "status", "analysis", "fall", "need", "red", "café", "日本"} {
		if got := stem.String(w); got != w {
			t.Errorf("stem(%q) = %q, want it unchanged", w, got)
		}
	}
	// In vectors: inflected forms embed alike, unlike unrelated words.
	b := NewBuiltin()
	vs := embedAll(t, b, "running", "run", "ran", "swimming")
	if Cosine(vs[0], vs[1]) < 0.6 {
		t.Fatalf("running ~ run only %.3f", Cosine(vs[0], vs[1]))
	}
	if Cosine(vs[0], vs[1]) <= Cosine(vs[0], vs[3])+0.3 {
		t.Fatalf("running ~ run %.3f, running ~ swimming %.3f", Cosine(vs[0], vs[1]), Cosine(vs[0], vs[3]))
	}
}

func TestBuiltinTokens(t *testing.T) {
	b := NewBuiltin()
	vs := embedAll(t, b,
		"The customer's invoice", "customer invoice", // possessive, stop word
		"shouldn't pay", "shouldnt pay",
		"RECEIVE Payment", "receive payment",
		"Café NAÏVE", "café naïve",
		"payment receive", // order: bigrams differ
	)
	for i := 0; i < 8; i += 2 {
		if c := Cosine(vs[i], vs[i+1]); c < 0.999 {
			t.Errorf("pair %d: %.4f", i/2, c)
		}
	}
	if c := Cosine(vs[5], vs[8]); c > 0.99 || c < 0.7 {
		t.Errorf("word order: %.4f", c)
	}
}

func TestBuiltinContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewBuiltin().Embed(ctx, []string{"x"}); err == nil {
		t.Fatal("no error for a canceled context")
	}
}

func TestCosineNormalize(t *testing.T) {
	if c := Cosine([]float32{1, 0}, []float32{1, 0}); math.Abs(float64(c)-1) > 1e-6 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{1, 0}, []float32{0, 2}); c != 0 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{3, 4}, []float32{-6, -8}); math.Abs(float64(c)+1) > 1e-6 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{1}, []float32{1, 2}); c != 0 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{0, 0}, []float32{1, 2}); c != 0 {
		t.Fatal(c)
	}
	v := Normalize([]float32{3, 4})
	if math.Abs(float64(v[0])-0.6) > 1e-6 || math.Abs(float64(v[1])-0.8) > 1e-6 {
		t.Fatal(v)
	}
	if v := Normalize([]float32{0, 0}); v[0] != 0 || v[1] != 0 {
		t.Fatal(v)
	}
}

// benchTexts is about 2 MB of English-like text in passages of about 1000
// characters.
func benchTexts() ([]string, int) {
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields(`the customer receives a payment invoice from our server and the bot
		indexes every uploaded document so that search ranks passages by relevance with
		hybrid full-text and vector scoring while administrators configure workspaces
		integrations webhooks conversations messages users tokens expire after one hour
		running processes stopped failed created agreed policies classes matches`)
	var texts []string
	size := 0
	for size < 2<<20 {
		var b strings.Builder
		for b.Len() < 1000 {
			w := words[r.IntN(len(words))]
			if r.IntN(8) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if r.IntN(12) == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
		size += b.Len()
	}
	return texts, size
}

func BenchmarkBuiltin(b *testing.B) {
	texts, size := benchTexts()
	e := NewBuiltin()
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < len(texts); i += 64 {
			if _, err := e.Embed(ctx, texts[i:min(i+64, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
