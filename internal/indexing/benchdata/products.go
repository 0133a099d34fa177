package benchdata

import (
	"strconv"
	"strings"
)

// A product category: what its pages say beyond the common sections.
type category struct {
	name    string // "wireless headphones"
	battery bool
	part    string // what the care section tells to wipe
	weight  [2]int // grams
	price   [2]int // dollars
	uses    []usage
}

// usage is a category-specific fact: its sentence (with {S} the product,
// {n} and {m} numbers drawn from n and m) and its questions.
type usage struct {
	text      string
	n, m      [2]int
	questions []string
}

var categories = []category{
	{name: "wireless headphones", battery: true, part: "ear cushions and headband", weight: [2]int{180, 320}, price: [2]int{79, 349}, uses: []usage{
		{text: "To switch on noise cancelling, press the ANC button on the left ear cup of the {S} twice; press it once more for transparency mode.",
			questions: []string{"How do I turn on noise cancelling on the {S}?", "{S} noise cancellation button", "how to switch {S} to transparency mode"}},
		{text: "Replacement ear cushions for the {S} are sold in pairs for ${n} and snap on without tools.", n: [2]int{19, 39},
			questions: []string{"Can I replace the ear pads on my {S}?", "{S} ear cushion replacement price"}},
	}},
	{name: "robot vacuum", battery: true, part: "sensors and charging contacts", weight: [2]int{2900, 4100}, price: [2]int{199, 899}, uses: []usage{
		{text: "Empty the dust bin of the {S} after every {n} cleaning runs and wash its filter once a month.", n: [2]int{2, 5},
			questions: []string{"How often should I empty the dust bin on the {S}?", "{S} empty bin how often"}},
		{text: "The side brush of the {S} wears out and should be replaced every {n} months.", n: [2]int{3, 8},
			questions: []string{"When do I need to replace the side brush of the {S}?", "{S} side brush replacement"}},
	}},
	{name: "espresso machine", part: "steam wand and drip tray", weight: [2]int{3500, 9000}, price: [2]int{249, 1299}, uses: []usage{
		{text: "Descale the {S} every {n} weeks, or sooner when the descale light turns orange.", n: [2]int{4, 12},
			questions: []string{"How often do I need to descale the {S}?", "what does the orange light on the {S} mean", "{S} descaling"}},
		{text: "The {S} is ready to brew {n} seconds after you switch it on.", n: [2]int{3, 45},
			questions: []string{"How long does the {S} take to heat up?", "{S} warm up time"}},
	}},
	{name: "smart thermostat", part: "display", weight: [2]int{110, 260}, price: [2]int{99, 279}, uses: []usage{
		{text: "The {S} connects to 2.4 GHz Wi-Fi networks only; 5 GHz networks are not supported.",
			questions: []string{"Does the {S} work with 5 GHz wifi?", "{S} wifi requirements"}},
		{text: "To set an away schedule on the {S}, open the app, choose Away mode and enter your dates; the temperature is kept at {n} degrees while you are gone.", n: [2]int{12, 17},
			questions: []string{"How do I put the {S} in vacation mode?", "{S} away mode temperature"}},
	}},
	{name: "electric toothbrush", battery: true, part: "handle and charging base", weight: [2]int{95, 160}, price: [2]int{39, 229}, uses: []usage{
		{text: "Replace the brush head of the {S} every {n} months, or earlier if the bristles splay.", n: [2]int{2, 4},
			questions: []string{"How often should I change the brush head on the {S}?", "{S} brush head replacement"}},
		{text: "The {S} has a built-in {n}-minute timer that pauses briefly every 30 seconds to tell you to move to the next part of your mouth.", n: [2]int{2, 3},
			questions: []string{"Why does my {S} stop every 30 seconds?", "{S} timer"}},
	}},
	{name: "fitness tracker", battery: true, part: "strap and sensor window", weight: [2]int{21, 48}, price: [2]int{49, 299}, uses: []usage{
		{text: "The {S} is water resistant to {n} metres, so you can wear it in the shower and while swimming.", n: [2]int{30, 100},
			questions: []string{"Can I go swimming with the {S}?", "is the {S} waterproof"}},
		{text: "Sleep tracking on the {S} starts automatically when you wear it to bed; your sleep score appears in the app the next morning.",
			questions: []string{"How do I track my sleep with the {S}?", "{S} sleep score"}},
	}},
	{name: "air purifier", part: "air intake grille", weight: [2]int{3200, 8800}, price: [2]int{129, 699}, uses: []usage{
		{text: "Replace the HEPA filter of the {S} every {n} months; the filter light turns red when it is due.", n: [2]int{6, 12},
			questions: []string{"How often do I change the filter in the {S}?", "red light on {S}", "{S} HEPA filter replacement"}},
		{text: "The {S} is designed for rooms of up to {n} square metres.", n: [2]int{20, 80},
			questions: []string{"How big a room can the {S} clean?", "{S} room size"}},
	}},
	{name: "blender", part: "motor base", weight: [2]int{2100, 5200}, price: [2]int{59, 549}, uses: []usage{
		{text: "The jar of the {S} holds {n} litres and is dishwasher safe; wash the blade assembly by hand.", n: [2]int{1, 2},
			questions: []string{"Is the jar of the {S} dishwasher safe?", "{S} jar capacity"}},
		{text: "Do not run the {S} for more than {n} seconds at a time with hot liquids, and leave the lid cap open to let steam out.", n: [2]int{30, 60},
			questions: []string{"Can I blend hot soup in the {S}?", "{S} hot liquids"}},
	}},
	{name: "e-reader", battery: true, part: "screen", weight: [2]int{160, 310}, price: [2]int{99, 399}, uses: []usage{
		{text: "The {S} has {n} GB of storage, enough for several thousand books.", n: [2]int{8, 32},
			questions: []string{"How many books can the {S} hold?", "{S} storage space"}},
		{text: "To change the font size on the {S}, tap the top of the page and open the Aa menu.",
			questions: []string{"How do I make the text bigger on the {S}?", "{S} font size"}},
	}},
	{name: "portable speaker", battery: true, part: "grille", weight: [2]int{300, 1200}, price: [2]int{49, 299}, uses: []usage{
		{text: "Two {S} speakers can play in stereo: hold the link buttons on both for {n} seconds until the lights turn white.", n: [2]int{2, 5},
			questions: []string{"How do I pair two {S} speakers together?", "{S} stereo pairing"}},
		{text: "The {S} is rated IP67: it survives being dropped in water up to 1 metre deep for 30 minutes.",
			questions: []string{"Is the {S} waterproof?", "can the {S} go in the pool"}},
	}},
	{name: "electric kettle", part: "outside of the kettle", weight: [2]int{900, 1600}, price: [2]int{29, 149}, uses: []usage{
		{text: "The {S} boils a full {n} litres of water in about {m} minutes.", n: [2]int{1, 2}, m: [2]int{3, 5},
			questions: []string{"How long does the {S} take to boil?", "{S} capacity"}},
		{text: "The limescale filter of the {S} lifts out of the spout and can be rinsed under the tap.",
			questions: []string{"How do I clean the filter in the {S}?", "{S} limescale filter"}},
	}},
	{name: "standing desk", part: "desktop and control panel", weight: [2]int{28000, 45000}, price: [2]int{299, 999}, uses: []usage{
		{text: "The {S} adjusts from 62 to {n} cm high and holds up to {m} kg.", n: [2]int{118, 130}, m: [2]int{70, 150},
			questions: []string{"How high does the {S} go?", "{S} weight limit"}},
		{text: "The control panel of the {S} remembers {n} height presets; hold a number key for three seconds to save the current height.", n: [2]int{2, 4},
			questions: []string{"How do I save a height preset on the {S}?", "{S} memory buttons"}},
	}},
}

var brands = []string{"Aurora", "Nimbus", "Vertex", "Lumen", "Corvid", "Halcyon", "Quill", "Tundra", "Solace", "Pinnacle",
	"Zephyr", "Marlin", "Ember", "Orbit", "Kestrel", "Juniper", "Basalt", "Cobalt", "Fable", "Sable"}

var models = []string{"X2", "Pro 5", "S40", "Air 3", "Max 2", "Mini", "One", "Go", "Ultra", "Lite 4", "Neo", "Flex 7", "Duo", "Edge", "Prime 3"}

var colours = []string{"black", "white", "graphite", "sage green", "navy", "sand", "silver", "coral", "slate blue"}

var taglines = []string{
	"designed for everyday use and built to last",
	"our best-selling model, now quieter and lighter",
	"combines a clean design with the features you actually use",
	"made with recycled materials and a repairable design",
	"a compact model for small homes and busy schedules",
}

// products writes 60 product pages (HTML), 5 per category.
func (g *gen) products() {
	used := map[string]bool{}
	for ci, c := range categories {
		for j := range 5 {
			var s string
			for {
				s = brands[(ci*7+j*3+g.r.IntN(3))%len(brands)] + " " + g.pick(models)
				if !used[s] {
					break
				}
			}
			used[s] = true
			g.product(c, s)
		}
	}
}

func (g *gen) product(c category, s string) {
	const coll = "products"
	g.productNames = append(g.productNames, s)
	full := s + " " + c.name
	var b strings.Builder
	w := func(format string, args ...any) { b.WriteString(sprintf(format, args...)) }
	w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s | Shop</title>\n", full)
	w("<style>body{font-family:sans-serif} .price{font-weight:bold}</style>\n<script>window.dataLayer=[];</script></head>\n<body>\n")
	w("<nav><a href=\"/\">Home</a> &gt; <a href=\"/c/%s\">%s</a> &gt; %s</nav>\n<main>\n", slug(c.name), title(c.name), s)
	w("<h1>%s</h1>\n<p>The %s is a %s %s.</p>\n", full, s, c.name, g.pick(taglines))

	// Specifications.
	weight := g.between(c.weight[0], c.weight[1])
	price := g.between(c.price[0], c.price[1])
	cols := []string{g.pick(colours), g.pick(colours)}
	if cols[0] == cols[1] {
		cols = cols[:1]
	}
	wt := strconv.Itoa(weight) + " g"
	if weight >= 1000 {
		wt = strconv.FormatFloat(float64(weight)/1000, 'f', 1, 64) + " kg"
	}
	lead := sprintf("Key specifications of the %s:", s)
	w("<h2>Specifications</h2>\n<p>%s</p>\n<ul>\n<li>Weight: %s</li>\n<li>Colours: %s</li>\n<li>Price: $%d</li>\n<li>In the box: %s, quick start guide</li>\n</ul>\n",
		lead, wt, strings.Join(cols, ", "), price, c.name)
	g.fact(coll, lead, expand(g.pick([]string{"How much does the {S} weigh?", "{S} weight", "How much is the {S}?", "{S} price", "what colours does the {S} come in"}), "{S}", s))

	if c.battery {
		var t string
		var qs []string
		if g.r.IntN(2) == 0 {
			t = sprintf("A full charge gives the %s up to %d hours of use, and charging from empty takes about %d minutes with the included USB-C cable.", s, g.between(6, 60), g.between(45, 180))
			qs = []string{"How long does the {S} battery last?", "{S} battery life", "How long does it take to charge the {S}?", "{S} charging time", "how long does the {S} last when fully charged"}
		} else {
			t = sprintf("The %s battery lasts around %d hours between charges; a 10-minute quick charge adds about %d hours.", s, g.between(6, 60), g.between(1, 5))
			qs = []string{"How long does the {S} battery last?", "{S} battery life", "does the {S} have fast charging"}
		}
		w("<h2>Battery and charging</h2>\n<p>%s</p>\n", t)
		g.fact(coll, t, expandAll(qs, s)...)
	}

	years := g.between(1, 5)
	var wt2 string
	switch g.r.IntN(3) {
	case 0:
		wt2 = sprintf("The %s comes with a %d-year limited warranty that covers manufacturing defects. Accidental damage and normal wear are not covered.", s, years)
	case 1:
		wt2 = sprintf("We guarantee the %s against defects in materials and workmanship for %d years from the date of purchase.", s, years)
	default:
		wt2 = sprintf("Warranty: %d years on the %s itself and 6 months on accessories such as cables.", years, s)
	}
	w("<h2>Warranty</h2>\n<p>%s</p>\n<p>Keep your receipt: you will need it for a claim.</p>\n", wt2)
	g.fact(coll, wt2, expandAll([]string{"How long is the warranty on the {S}?", "{S} warranty", "is my {S} still under warranty", "{S} guarantee period", "is the {S} covered if it breaks after a year"}, s)...)

	days := []int{14, 30, 45, 60, 90}[g.r.IntN(5)]
	var rt string
	if g.r.IntN(2) == 0 {
		rt = sprintf("You can return the %s within %d days of delivery for a full refund, as long as it is in its original packaging.", s, days)
	} else {
		rt = sprintf("Changed your mind? Send the %s back within %d days and we refund the purchase price to your original payment method.", s, days)
	}
	w("<h2>Returns and refunds</h2>\n<p>%s</p>\n", rt)
	g.fact(coll, rt, expandAll([]string{"Can I return the {S}?", "Can the {S} be returned after opening?", "how do I get refunded for the {S}", "{S} return policy", "How many days do I have to send back the {S}?", "I want a refund for my {S}", "money back {S}"}, s)...)

	rs := sprintf("If the %s stops responding, hold the power button for %d seconds until the light blinks %s to restart it. Your settings are kept.",
		s, g.between(5, 20), g.pick([]string{"white", "blue", "orange", "green"}))
	u := c.uses
	u1 := expand(u[0].text, "{S}", s, "{n}", strconv.Itoa(g.between(u[0].n[0], u[0].n[1])), "{m}", strconv.Itoa(g.between(u[0].m[0], u[0].m[1])))
	u2 := expand(u[1].text, "{S}", s, "{n}", strconv.Itoa(g.between(u[1].n[0], u[1].n[1])), "{m}", strconv.Itoa(g.between(u[1].m[0], u[1].m[1])))
	w("<h2>Using your %s</h2>\n<p>%s</p>\n<p>%s</p>\n", s, u1, u2)
	g.fact(coll, u1, expandAll(u[0].questions, s)...)
	g.fact(coll, u2, expandAll(u[1].questions, s)...)
	w("<h2>Troubleshooting</h2>\n<p>%s</p>\n<p>Still stuck? Contact support with your order number.</p>\n", rs)
	g.fact(coll, rs, expandAll([]string{"How do I reset the {S}?", "{S} not responding", "{S} frozen what do I do", "restart {S}"}, s)...)
	w("<h2>Care and cleaning</h2>\n<p>Wipe the %s with a soft, slightly damp cloth. Do not use alcohol, bleach or abrasive cleaners.</p>\n", c.part)
	w("</main>\n<footer>© 2025 Northwind Outfitters. Prices include VAT.</footer>\n</body></html>\n")
	g.doc(coll, "products/"+slug(full)+".html", "text/html; charset=utf-8", b.String())
}

func expandAll(qs []string, s string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = expand(q, "{S}", s)
	}
	return out
}

// title capitalizes the first letter of each word.
func title(s string) string {
	ws := strings.Fields(s)
	for i, w := range ws {
		ws[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(ws, " ")
}
