package benchdata

import "strings"

type city struct {
	name, country, airport, transfer, currency, dish, trip, tripBy string
	tripHours                                                      int
	from, to                                                       string // best months
}

var cities = []city{
	{"Lisbon", "Portugal", "LIS", "metro", "euro", "pastel de nata", "Sintra", "train", 1, "April", "June"},
	{"Kyoto", "Japan", "KIX", "Haruka express train", "yen", "kaiseki", "Nara", "train", 1, "October", "November"},
	{"Reykjavik", "Iceland", "KEF", "airport bus", "Icelandic krona", "lamb soup", "the Golden Circle", "tour bus", 8, "June", "August"},
	{"Marrakesh", "Morocco", "RAK", "airport bus", "dirham", "tagine", "the Atlas Mountains", "minibus", 2, "March", "May"},
	{"Vancouver", "Canada", "YVR", "Canada Line train", "Canadian dollar", "salmon candy", "Whistler", "coach", 2, "June", "September"},
	{"Cape Town", "South Africa", "CPT", "MyCiTi bus", "rand", "bobotie", "Cape Point", "car", 2, "November", "March"},
	{"Hanoi", "Vietnam", "HAN", "airport bus 86", "dong", "pho", "Ha Long Bay", "shuttle bus", 3, "October", "December"},
	{"Edinburgh", "Scotland", "EDI", "tram", "pound", "cullen skink", "Stirling Castle", "train", 1, "May", "September"},
	{"Buenos Aires", "Argentina", "EZE", "shuttle bus", "Argentine peso", "asado", "Tigre", "train", 1, "March", "May"},
	{"Prague", "Czech Republic", "PRG", "airport express bus", "koruna", "svickova", "Kutna Hora", "train", 1, "May", "June"},
	{"Queenstown", "New Zealand", "ZQN", "Orbus", "New Zealand dollar", "lamb", "Milford Sound", "coach", 4, "December", "February"},
	{"Istanbul", "Turkey", "IST", "M11 metro", "Turkish lira", "simit", "the Princes' Islands", "ferry", 2, "April", "May"},
	{"Seville", "Spain", "SVQ", "airport bus EA", "euro", "salmorejo", "Cordoba", "high-speed train", 1, "March", "May"},
	{"Cusco", "Peru", "CUZ", "taxi", "sol", "cuy", "Machu Picchu", "train", 4, "May", "September"},
	{"Bergen", "Norway", "BGO", "Bybanen light rail", "Norwegian krone", "fish soup", "Flam", "train", 3, "May", "August"},
	{"Tallinn", "Estonia", "TLL", "tram 4", "euro", "black bread", "Helsinki", "ferry", 2, "June", "August"},
	{"Oaxaca", "Mexico", "OAX", "colectivo shuttle", "Mexican peso", "mole negro", "Hierve el Agua", "colectivo", 2, "October", "November"},
	{"Hoi An", "Vietnam", "DAD", "private transfer", "dong", "cao lau", "My Son", "motorbike", 1, "February", "April"},
	{"Dubrovnik", "Croatia", "DBV", "airport shuttle bus", "euro", "black risotto", "Kotor", "bus", 3, "May", "June"},
	{"Valletta", "Malta", "MLA", "X4 bus", "euro", "pastizzi", "Gozo", "ferry", 1, "April", "June"},
	{"Porto", "Portugal", "OPO", "metro line E", "euro", "francesinha", "the Douro Valley", "train", 2, "May", "October"},
	{"Ljubljana", "Slovenia", "LJU", "airport shuttle", "euro", "struklji", "Lake Bled", "bus", 1, "May", "September"},
	{"Krakow", "Poland", "KRK", "airport train", "zloty", "pierogi", "the Wieliczka salt mine", "bus", 1, "May", "September"},
	{"Chiang Mai", "Thailand", "CNX", "songthaew", "baht", "khao soi", "Doi Inthanon", "car", 2, "November", "February"},
	{"Cartagena", "Colombia", "CTG", "taxi", "Colombian peso", "arepa de huevo", "the Rosario Islands", "boat", 1, "December", "April"},
	{"Tbilisi", "Georgia", "TBS", "bus 337", "lari", "khachapuri", "Mtskheta", "marshrutka", 1, "May", "June"},
	{"Zanzibar", "Tanzania", "ZNZ", "taxi", "Tanzanian shilling", "Zanzibar pizza", "Prison Island", "boat", 1, "June", "October"},
	{"Hobart", "Tasmania", "HBA", "SkyBus", "Australian dollar", "scallop pie", "Port Arthur", "car", 2, "December", "March"},
	{"Quebec City", "Canada", "YQB", "bus 76", "Canadian dollar", "poutine", "Montmorency Falls", "bus", 1, "June", "September"},
	{"Salzburg", "Austria", "SZG", "trolleybus 2", "euro", "Salzburger Nockerl", "Hallstatt", "bus", 2, "May", "September"},
}

// travel writes 30 city guides, alternately HTML and Markdown.
func (g *gen) travel() {
	const coll = "travel"
	for i, c := range cities {
		best := sprintf("The best time to visit %s is from %s to %s, when the weather is mild and the crowds are smaller.", c.name, c.from, c.to)
		mins, price, taxiMins, taxi := g.between(15, 55), g.between(2, 12), g.between(15, 50), g.between(15, 60)
		transfer := sprintf("From %s airport, the %s reaches central %s in about %d minutes; a single ticket costs %d %s.", c.airport, c.transfer, c.name, mins, price, plural(c.currency))
		taxiS := sprintf("A taxi takes around %d minutes and costs about %d %s.", taxiMins, taxi*price, plural(c.currency))
		pct := []int{0, 5, 10, 10, 15}[g.r.IntN(5)]
		var tip string
		if pct == 0 {
			tip = sprintf("%s uses the %s. Tipping is not expected in %s, and leaving money on the table can confuse staff.", c.name, c.currency, c.name)
		} else {
			tip = sprintf("%s uses the %s. In %s restaurants a tip of about %d%% is customary when service is not included.", c.name, c.currency, c.name, pct)
		}
		food := sprintf("Do not leave %s without trying %s, which you will find in markets and family-run restaurants all over town.", c.name, c.dish)
		hours := "hour"
		if c.tripHours > 1 {
			hours = "hours"
		}
		trip := sprintf("The most popular day trip from %s is %s, about %d %s away by %s.", c.name, c.trip, c.tripHours, hours, c.tripBy)
		intro := sprintf("%s, %s: a practical guide for first-time visitors, updated for this season.", c.name, c.country)

		g.fact(coll, best, expandAll([]string{"What is the best time to visit {S}?", "when should I go to {S}", "best month for {S}", "{S} weather when to travel"}, c.name)...)
		g.fact(coll, transfer, expandAll([]string{"How do I get from the airport to {S} city centre?", "{S} airport to city center", "public transport from {S} airport", "how much is the train from {S} airport"}, c.name)...)
		g.fact(coll, tip, expandAll([]string{"Do you tip in {S} restaurants?", "tipping in {S}", "what currency do they use in {S}", "how much to tip {S}"}, c.name)...)
		g.fact(coll, food, expandAll([]string{"What food should I try in {S}?", "{S} local dish", "what to eat in {S}"}, c.name)...)
		g.fact(coll, trip, expandAll([]string{"What is a good day trip from {S}?", "{S} day trips", "how far is " + c.trip + " from {S}"}, c.name)...)

		var b strings.Builder
		w := func(format string, args ...any) { b.WriteString(sprintf(format, args...)) }
		if i%2 == 0 {
			w("<html><head><title>%s travel guide</title></head><body><article>\n<h1>%s travel guide</h1>\n<p>%s</p>\n", c.name, c.name, intro)
			w("<h2>When to go</h2>\n<p>%s</p>\n<h2>Getting there</h2>\n<p>%s</p>\n<p>%s</p>\n", best, transfer, taxiS)
			w("<h2>Money and tipping</h2>\n<p>%s Cards are widely accepted, but carry some cash for markets.</p>\n", tip)
			w("<h2>What to eat</h2>\n<p>%s</p>\n<h2>Day trips</h2>\n<p>%s</p>\n</article></body></html>\n", food, trip)
			g.doc(coll, "travel/"+slug(c.name)+".html", "text/html", b.String())
		} else {
			w("# %s travel guide\n\n%s\n\n## When to go\n\n%s\n\n## Getting there\n\n%s %s\n\n", c.name, intro, best, transfer, taxiS)
			w("## Money and tipping\n\n%s Cards are widely accepted, but carry some cash for markets.\n\n", tip)
			w("## What to eat\n\n%s\n\n## Day trips\n\n%s\n", food, trip)
			g.doc(coll, "travel/"+slug(c.name)+".md", "text/markdown", b.String())
		}
	}
}

func plural(currency string) string {
	switch {
	case strings.HasSuffix(currency, "yen"), strings.HasSuffix(currency, "baht"), strings.HasSuffix(currency, "rand"),
		strings.HasSuffix(currency, "dong"), strings.HasSuffix(currency, "lari"), strings.HasSuffix(currency, "krone"),
		strings.HasSuffix(currency, "krona"), strings.HasSuffix(currency, "koruna"), strings.HasSuffix(currency, "zloty"):
		return currency
	case strings.HasSuffix(currency, "sol"):
		return "soles"
	case strings.HasSuffix(currency, "peso"):
		return currency + "s"
	}
	return currency + "s"
}
