// Package stem reduces English word forms to a common stem ("payments",
// "payment"), the same for the built-in embedder and the search ranking.
package stem

// Bytes reduces a lowercase ASCII word in place to a stem and returns it: a
// light English suffix stripper, in the spirit of the first steps of Porter's
// algorithm. Words of other scripts are returned unchanged.
//
//   - plurals: "-sses" → "-ss", "-ies" → "-y", "-es" after x, z, ch or sh,
//     "-s" (not after s, u or i: "class", "status", "analysis");
//   - "-ied" → "-y", "-eed" → "-ee", "-ed" and "-ing" when a vowel remains
//     before them ("sing", "bring", "red" stay), then a doubled final
//     consonant other than l, s or z is undoubled ("running" → "run");
//   - a final "e" is dropped ("receive" → "receiv", like "received").
//
// The same stem for several forms matters, not its spelling.
func Bytes(w []byte) []byte {
	for _, c := range w {
		if c >= 0x80 {
			return w
		}
	}
	if len(w) <= 3 {
		return w
	}
	n := len(w)
	switch {
	case hasSuffix(w, "sses"):
		w = w[:n-2]
	case hasSuffix(w, "ies"):
		if n > 4 {
			w = append(w[:n-3], 'y')
		} else {
			w = w[:n-1]
		}
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
	case hasSuffix(w, "xes"), hasSuffix(w, "zes"), hasSuffix(w, "ches"), hasSuffix(w, "shes"):
		w = w[:n-2]
	case w[n-1] == 's':
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case hasSuffix(w, "ied") && n > 4:
		w = append(w[:n-3], 'y')
	case hasSuffix(w, "eed"):
		if hasVowel(w[:n-3]) {
			w = w[:n-1]
		}
	case hasSuffix(w, "ed") && n > 3 && hasVowel(w[:n-2]):
		w = undouble(w[:n-2])
	case hasSuffix(w, "ing") && n > 4 && hasVowel(w[:n-3]):
		w = undouble(w[:n-3])
	}
	if n = len(w); n > 2 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

// undouble drops the last letter of a doubled final consonant other than l,
// s and z ("runn" → "run", "fall" stays).
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !isVowel(w[n-1]) && w[n-1] >= 'a' && w[n-1] <= 'z' {
		switch w[n-1] {
		case 'l', 's', 'z':
		default:
			return w[:n-1]
		}
	}
	return w
}

// String is Bytes on a string.
func String(w string) string {
	return string(Bytes([]byte(w)))
}
