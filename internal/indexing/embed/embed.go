// Package embed turns passages and queries into vectors for the vector half
// of hybrid search.
//
// An Embedder's Name identifies its vector space: vectors stored under one
// name must only be compared with query vectors from an embedder of the same
// name, and a change to how an embedder computes its vectors must change its
// name, so that stored vectors are recomputed.
//
// # Builtin ("builtin-hash-256")
//
// The builtin embedder needs no network and no model file. It hashes
// features of the text into 256 dimensions ("feature hashing"):
//
//   - Words: the text is split into words, runs of letters and digits, and
//     lowercased. An apostrophe inside a word is dropped ("don't" is
//     "dont"), and a possessive "'s" with it. English stop words ("the",
//     "of", "is", "not", ...) are dropped entirely.
//   - (a) Each word, reduced by a light English suffix-stripping stemmer
//     (plurals, "-ed", "-ing", a final "e", doubled final consonants:
//     "running", "runs" and "run" are all "run"; "received", "receives" and
//     "receive" are all "receiv"), weight WeightWord (1.0).
//   - (b) Each pair of consecutive remaining word stems (stop words between
//     them skipped), weight WeightBigram (0.5): some sensitivity to word
//     order and phrases.
//   - (c) The character trigrams of each remaining word, unstemmed, between
//     boundary markers ("payment": "^pa", "pay", "aym", ..., "nt$"),
//     weight WeightTrigram (0.5): a word with a typo ("paymnet") still
//     shares several trigrams with the right one, as do forms of a word
//     that the stemmer leaves apart ("payer" and "pay"), which full-text
//     search does not catch.
//
// A feature's hash (64-bit FNV-1a, then a bit mixer) picks its dimension
// and its sign (+1 or -1, so that collisions cancel out on average rather
// than pile up). A feature occurring tf times in the text adds
// weight × (1 + ln tf) (sublinear: repeating a word matters less and less).
// The vector is then scaled to length 1 (L2); a text with no features
// (empty, or only stop words and punctuation) gives the zero vector, which
// is similar to nothing. The result is the same on every run and platform:
// it depends only on the text's bytes.
//
// Limits, honestly: this is lexical similarity, not meaning. Texts are
// similar when they share words, word forms or parts of words; synonyms
// ("car" and "automobile"), paraphrases and other languages are not
// recognized, and negations ("not", "no") are stop words, so "works" and
// "does not work" look alike. Irregular forms ("ran", "mice") are not
// stemmed. Stemming and stop words are English; other languages written
// with spaces between words still match on whole words and trigrams;
// scripts without spaces (Chinese, Japanese) only on character trigrams.
// 256 dimensions mean collisions: unrelated texts get cosine similarities
// scattered around 0 (standard deviation about 0.06, i.e. 1/√256, and now
// and then ±0.25) rather than exactly 0, so low scores are noise, and a
// short query with a typo scores only about 0.2–0.35 against the text it
// means. Long texts dilute each feature's weight. It is best as a typo- and
// morphology-tolerant complement to full-text ranking; use an external
// model (OpenAI) for semantic search.
//
// Speed: about 60 MB/s of text per core (BenchmarkBuiltin), with no
// allocation per word or feature.
//
// # OpenAI ("openai:<model>")
//
// NewOpenAI calls an OpenAI-compatible embeddings endpoint: POST
// {baseURL}/embeddings with {"model": ..., "input": [...]}, at most
// OpenAIBatch inputs per request, with "Authorization: Bearer <key>" when a
// key is set. The vectors are put back in input order by their "index" and
// scaled to length 1. A request that fails with status 429 or 5xx, or on
// the network, is tried again after 0.5 s, then after 1 s (or after the
// server's Retry-After, up to 30 s), 3 attempts in all; the context's
// deadline bounds the whole call. The final error names the status and the
// server's message. The HTTP and retry code is ai.PostJSON's, shared with
// the chat-completions client.
package embed

import (
	"context"
	"math"
)

// Embedder turns texts into vectors of length 1.
type Embedder interface {
	// Name identifies the vector space, e.g. "builtin-hash-256" or
	// "openai:text-embedding-3-small".
	Name() string
	// Dim is the vectors' length (0 while unknown).
	Dim() int
	// Embed returns one L2-normalized vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Cosine returns the cosine similarity of a and b: 0 when their lengths
// differ or either is the zero vector.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		// The conversions forbid fused multiply-adds, which some
		// platforms would use and others not.
		dot += float64(x * y)
		na += float64(x * x)
		nb += float64(y * y)
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}

// Normalize scales v in place to length 1 (L2); the zero vector stays as
// it is. It returns v.
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(float64(x) * float64(x)) // no fused multiply-add
	}
	if s == 0 {
		return v
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return v
}
