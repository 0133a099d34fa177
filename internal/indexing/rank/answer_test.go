package rank

import "testing"

func TestAsks(t *testing.T) {
	for q, want := range map[string]Answer{
		"how much is shipping":                  Amount,
		"How much does shipping to the UK cost": Amount,
		"what does a repair cost?":              Amount,
		"how long does standard delivery take":  Duration,
		"How soon do I get my refund":           Duration,
		"how heavy is the 2-person tent":        Weight,
		"how much does the tent weigh":          Weight, // the weight, not a price
		"how many stores do you have":           Count,
		"can i return a sale item":              AnyAnswer,
		"shipping costs":                        Amount,
		"how":                                   AnyAnswer,
		"":                                      AnyAnswer,
		"longing for a tent":                    AnyAnswer, // words, not parts of words
	} {
		if got := Asks(q); got != want {
			t.Errorf("Asks(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestHolds(t *testing.T) {
	for _, c := range []struct {
		a    Answer
		text string
		want bool
	}{
		{Amount, "It costs €4.95 per order.", true},
		{Amount, "A fee of 10 euros applies.", true},
		{Amount, "Only $5.", true},
		{Amount, "Send it back within 30 days.", false},
		{Duration, "Send it back within 30 days.", true},
		{Duration, "Delivery takes 2 to 4 working days.", true},
		{Duration, "Open from 9 to 5.", false},
		{Weight, "The tent weighs 1.8 kg packed.", true},
		{Weight, "Only 950 g.", true},
		{Weight, "It costs €4.95.", false},
		{Count, "We have 4 stores.", true},
		{Count, "We have four stores.", false},
		{AnyAnswer, "It costs €4.95.", false},
	} {
		if got := Holds(c.a, c.text); got != c.want {
			t.Errorf("Holds(%v, %q) = %v, want %v", c.a, c.text, got, c.want)
		}
	}
}
