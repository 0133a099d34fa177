package rank

import (
	"regexp"
	"strings"
	"unicode"
)

// Answer is the kind of answer a question asks for, when its wording says
// so: an amount of money ("how much does it cost"), a duration ("how
// long"), a weight ("how heavy") or a count ("how many").
type Answer int

const (
	AnyAnswer Answer = iota
	Amount
	Duration
	Weight
	Count
)

// Asks returns the kind of answer the question asks for (AnyAnswer when
// its wording does not say).
func Asks(question string) Answer {
	ws := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	q := " " + strings.Join(ws, " ") + " "
	switch {
	case strings.Contains(q, " how heavy ") || strings.Contains(q, " weigh ") || strings.Contains(q, " weighs ") || strings.Contains(q, " weight "):
		return Weight
	case strings.Contains(q, " how long ") || strings.Contains(q, " how many days ") || strings.Contains(q, " how many weeks ") ||
		strings.Contains(q, " how soon ") || strings.Contains(q, " how quickly "):
		return Duration
	case strings.Contains(q, " how much ") || strings.Contains(q, " cost ") || strings.Contains(q, " costs ") ||
		strings.Contains(q, " price ") || strings.Contains(q, " fee "):
		return Amount
	case strings.Contains(q, " how many "):
		return Count
	}
	return AnyAnswer
}

var (
	amountRE   = regexp.MustCompile(`(?i)[€$£¥]\s?\d|\d\s?(?:€|\$|£|eur\b|euros?\b|usd\b|dollars?\b|pounds?\b|gbp\b)`)
	durationRE = regexp.MustCompile(`(?i)\b\d+(?:[.,]\d+)?\s*(?:-|to|–)?\s*\d*\s*(?:working |business |calendar )?(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b`)
	weightRE   = regexp.MustCompile(`(?i)\b\d+(?:[.,]\d+)?\s*(?:g|grams?|kg|kilos?|kilograms?|lbs?|pounds?|oz|ounces?)\b`)
	countRE    = regexp.MustCompile(`\d`)
)

// Holds reports whether text holds an answer of kind a.
func Holds(a Answer, text string) bool {
	switch a {
	case Amount:
		return amountRE.MatchString(text)
	case Duration:
		return durationRE.MatchString(text)
	case Weight:
		return weightRE.MatchString(text)
	case Count:
		return countRE.MatchString(text)
	}
	return false
}
