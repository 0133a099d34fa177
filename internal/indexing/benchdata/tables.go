package benchdata

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
)

var firstNames = []string{"Priya", "Marco", "Aisha", "Tomasz", "Elena", "Kwame", "Sofia", "Jonas", "Mei", "Rafael", "Hannah", "Omar",
	"Ingrid", "Diego", "Yuki", "Fatima", "Lukas", "Chloe", "Arjun", "Nadia", "Oliver", "Camila", "Henrik", "Zara", "Mateo", "Leila",
	"Samuel", "Anya", "Felix", "Grace", "Ibrahim", "Julia", "Kenji", "Laura", "Nikolai", "Paula", "Ravi", "Selin", "Tobias", "Vera"}

var lastNames = []string{"Raman", "Rossi", "Okafor", "Nowak", "Petrova", "Mensah", "Moreno", "Becker", "Chen", "Alves", "Schmidt", "Haddad",
	"Larsen", "Castro", "Tanaka", "Rahman", "Weber", "Dubois", "Mehta", "Karimi", "Bennett", "Ortiz", "Nilsen", "Malik", "Silva",
	"Farouk", "Adeyemi", "Ivanova", "Hoffmann", "Murphy", "Yilmaz", "Kowalski", "Sato", "Fischer", "Novak", "Garcia", "Iyer",
	"Aydin", "Brandt", "Lindqvist"}

// person returns a name no one else in the corpus has.
func (g *gen) person(used map[string]bool) string {
	for {
		n := g.pick(firstNames) + " " + g.pick(lastNames)
		if !used[n] {
			used[n] = true
			return n
		}
	}
}

func csvBytes(rows [][]string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.WriteAll(rows)
	return b.String()
}

func hhmm(minutes int) string { return sprintf("%02d:%02d", minutes/60, minutes%60) }

// tables writes the CSV collection: 20 files.
func (g *gen) tables() {
	const coll = "tables"
	people := map[string]bool{}

	// Store locations, 4 regions of 25 stores.
	pre := []string{"River", "Oak", "Maple", "Cedar", "Willow", "Stone", "Kings", "Queens", "Mill", "Lake", "Hill", "Ash", "Elm",
		"Pine", "Castle", "Bridge", "Market", "Harbour", "Fern", "Birch"}
	suf := []string{"side", "field", "gate", "wood", "ford", "brook", "ton", "view", "more", "dale"}
	regions := []struct {
		name  string
		towns []string
	}{
		{"north", []string{"Leeds", "York", "Newcastle", "Durham", "Harrogate"}},
		{"south", []string{"Brighton", "Southampton", "Portsmouth", "Guildford", "Reading"}},
		{"east", []string{"Norwich", "Cambridge", "Ipswich", "Colchester", "Chelmsford"}},
		{"west", []string{"Bristol", "Bath", "Exeter", "Plymouth", "Gloucester"}},
	}
	streets := []string{"High Street", "Station Road", "Market Square", "Church Lane", "Victoria Road", "Park Avenue", "Mill Road", "Bridge Street"}
	usedStore := map[string]bool{}
	for _, reg := range regions {
		rows := [][]string{{"Store", "Address", "City", "Phone", "Mon-Fri", "Saturday", "Sunday"}}
		for range 25 {
			var name string
			for {
				name = g.pick(pre) + g.pick(suf)
				if !usedStore[name] {
					break
				}
			}
			usedStore[name] = true
			open := 8*60 + 30*g.r.IntN(4)
			closeWk := 17*60 + 30*g.r.IntN(7)
			sat := hhmm(9*60) + "-" + hhmm(17*60+30*g.r.IntN(3))
			sun := "closed"
			if g.r.IntN(3) > 0 {
				sun = hhmm(10*60+30*g.r.IntN(2)) + "-" + hhmm(16*60)
			}
			phone := sprintf("0%d %03d %04d", 113+g.r.IntN(800), g.r.IntN(1000), g.r.IntN(10000))
			rows = append(rows, []string{name, sprintf("%d %s", 1+g.r.IntN(180), g.pick(streets)), g.pick(reg.towns), phone,
				hhmm(open) + "-" + hhmm(closeWk), sat, sun})
			g.fact(coll, "Store: "+name+";", expandAll([]string{"What time does the {S} store close on Sunday?", "{S} opening hours saturday",
				"phone number of the {S} store", "is the {S} shop open on sundays", "address of {S} store", "{S} store hours"}, name)...)
		}
		g.doc(coll, "tables/stores-"+reg.name+".csv", "text/csv", csvBytes(rows))
	}

	// Shipping rates, standard and express, 40 countries.
	countries := []string{"Austria", "Belgium", "Bulgaria", "Croatia", "Cyprus", "Czech Republic", "Denmark", "Estonia", "Finland",
		"France", "Germany", "Greece", "Hungary", "Ireland", "Italy", "Latvia", "Lithuania", "Luxembourg", "Malta", "Netherlands",
		"Poland", "Portugal", "Romania", "Slovakia", "Slovenia", "Spain", "Sweden", "Norway", "Switzerland", "Iceland",
		"United Kingdom", "United States", "Canada", "Australia", "New Zealand", "Japan", "South Korea", "Singapore", "Israel", "Mexico"}
	for _, svc := range []string{"Standard", "Express"} {
		rows := [][]string{{"Service", "Country", "Zone", "Price (EUR)", "Delivery (business days)", "Free shipping from (EUR)"}}
		for i, c := range countries {
			zone := 1 + i/10
			price := 4.95 + float64(zone)*2 + float64(g.r.IntN(4))
			days := sprintf("%d-%d", zone+1, zone+3)
			free := strconv.Itoa(50 * zone)
			if svc == "Express" {
				price = price*2 + 5
				days = sprintf("%d-%d", max(1, zone-1), zone)
				free = "-"
			}
			rows = append(rows, []string{svc, c, strconv.Itoa(zone), strconv.FormatFloat(price, 'f', 2, 64), days, free})
			if svc == "Express" {
				g.fact(coll, "Service: Express; Country: "+c+";", expandAll([]string{"How much is express shipping to {S}?", "express delivery {S} price",
					"how fast is express shipping to {S}", "next day delivery to {S}"}, c)...)
			} else {
				g.fact(coll, "Service: Standard; Country: "+c+";", expandAll([]string{"How long does standard delivery to {S} take?", "shipping cost to {S}",
					"free shipping threshold for {S}", "how many days to ship to {S}"}, c)...)
			}
		}
		g.doc(coll, "tables/shipping-rates-"+strings.ToLower(svc)+".csv", "text/csv", csvBytes(rows))
	}

	// Staff directories, 5 departments of 25.
	depts := []struct {
		name   string
		titles []string
	}{
		{"Engineering", []string{"Software Engineer", "Senior Software Engineer", "Engineering Manager", "Site Reliability Engineer", "QA Analyst"}},
		{"Sales", []string{"Account Executive", "Sales Manager", "Business Development Rep", "Key Account Manager"}},
		{"Support", []string{"Support Specialist", "Support Team Lead", "Technical Support Engineer", "Returns Coordinator"}},
		{"Finance", []string{"Accountant", "Payroll Specialist", "Financial Controller", "Accounts Payable Clerk"}},
		{"Marketing", []string{"Content Writer", "Marketing Manager", "Designer", "SEO Specialist", "Social Media Manager"}},
	}
	offices := []string{"London, 3rd floor", "London, 5th floor", "Manchester", "Remote", "Leeds", "Dublin"}
	ext := 2000
	for _, d := range depts {
		rows := [][]string{{"Name", "Title", "Department", "Extension", "Office", "Email"}}
		for range 25 {
			n := g.person(people)
			ext += 1 + g.r.IntN(9)
			email := strings.ToLower(strings.ReplaceAll(n, " ", ".")) + "@northwind.example"
			rows = append(rows, []string{n, g.pick(d.titles), d.name, strconv.Itoa(ext), g.pick(offices), email})
			g.fact(coll, "Name: "+n+";", expandAll([]string{"What is {S}'s phone extension?", "{S} extension", "{S} email address",
				"which office is {S} in", "how do I contact {S}", "what does {S} do"}, n)...)
		}
		g.doc(coll, "tables/directory-"+strings.ToLower(d.name)+".csv", "text/csv", csvBytes(rows))
	}

	// Accessory price lists for the products, 3 files.
	items := []string{"carry case", "USB-C charging cable", "wall mount", "protective cover", "spare power adapter", "travel pouch"}
	var rows [][]string
	sku := 40000
	file := 0
	flush := func() {
		file++
		g.doc(coll, sprintf("tables/accessories-%d.csv", file), "text/csv", csvBytes(append([][]string{{"SKU", "Item", "Fits", "Price (USD)", "In stock"}}, rows...)))
		rows = nil
	}
	for i, p := range g.productNames {
		k := 1 + g.r.IntN(2)
		for _, j := range g.r.Perm(len(items))[:k] {
			sku += 1 + g.r.IntN(50)
			s := "NW-" + strconv.Itoa(sku)
			stock := []string{"yes", "yes", "no", "low"}[g.r.IntN(4)]
			rows = append(rows, []string{s, items[j], p, sprintf("%d.99", 9+g.r.IntN(40)), stock})
			g.fact(coll, "SKU: "+s+"; Item: "+items[j]+"; Fits: "+p+";", expandAll([]string{"How much is the " + items[j] + " for the {S}?",
				"{S} " + items[j] + " price", "do you sell a " + items[j] + " for the {S}", "is the {S} " + items[j] + " in stock"}, p)...)
		}
		if (i+1)%20 == 0 {
			flush()
		}
	}
	if len(rows) > 0 {
		flush()
	}

	// Conference schedule, 3 days of 24 sessions.
	prefixes := []string{"Lessons learned from", "A practical guide to", "Debugging", "Scaling", "Testing", "Securing", "Migrating to", "Observability for", "Cost control for"}
	topics := []string{"Kubernetes", "PostgreSQL", "Kafka streams", "edge caching", "GraphQL APIs", "mobile releases", "feature flags",
		"data lakes", "WebAssembly", "serverless functions", "service meshes", "vector search", "CI pipelines", "React Native apps",
		"event sourcing", "Terraform modules"}
	tracks := []string{"Platform", "Data", "Frontend", "Security"}
	usedTitle := map[string]bool{}
	for day := 1; day <= 3; day++ {
		rows := [][]string{{"Time", "Room", "Title", "Speaker", "Track"}}
		for s := range 24 {
			var t string
			for {
				t = g.pick(prefixes) + " " + g.pick(topics)
				if !usedTitle[t] {
					break
				}
			}
			usedTitle[t] = true
			sp := g.person(people)
			tm := hhmm(9*60 + (s/4)*60 + 30*g.r.IntN(2))
			room := sprintf("Room %c%d", 'A'+rune(s%4), 1+g.r.IntN(3))
			rows = append(rows, []string{sprintf("Day %d %s", day, tm), room, t, sp, tracks[s%4]})
			g.fact(coll, "Title: "+t+"; Speaker: "+sp+";", "When is the talk on "+t+"?", "who is giving the "+t+" talk",
				"what room is "+sp+"'s session in", sp+" talk time", "where is the "+strings.ToLower(t)+" session")
		}
		g.doc(coll, sprintf("tables/conference-day-%d.csv", day), "text/csv", csvBytes(rows))
	}

	// Bus timetables, 3 lines of 20 stops.
	stopA := []string{"Albert", "Baker", "Canal", "Dock", "Elm", "Fountain", "Garden", "Hospital", "Iron", "Jubilee", "Kiln", "Library",
		"Museum", "North", "Orchard", "Palace", "Quarry", "Rose", "Stadium", "Tower", "University", "Vine", "Water", "York"}
	stopB := []string{"Street", "Square", "Road", "Park", "Terrace", "Cross", "Lane"}
	usedStop := map[string]bool{}
	for _, line := range []int{7, 12, 31} {
		rows := [][]string{{"Stop", "First bus (Mon-Sat)", "Last bus (Mon-Sat)", "Every (minutes)", "Sunday service"}}
		first := 5*60 + 30 + g.r.IntN(30)
		for s := range 20 {
			var st string
			for {
				st = g.pick(stopA) + " " + g.pick(stopB)
				if !usedStop[st] {
					break
				}
			}
			usedStop[st] = true
			f := first + 3*s
			last := 23*60 + g.r.IntN(50) + 3*s
			sunday := []string{"yes", "yes", "reduced", "no"}[g.r.IntN(4)]
			rows = append(rows, []string{st, hhmm(f), hhmm(last % (24 * 60)), strconv.Itoa([]int{8, 10, 12, 15, 20}[g.r.IntN(5)]), sunday})
			l := strconv.Itoa(line)
			g.fact(coll, "Stop: "+st+";", "When is the last bus from "+st+" on line "+l+"?", "first bus "+st+" line "+l,
				"how often does the "+l+" run from "+st, "does line "+l+" stop at "+st+" on sundays")
		}
		g.doc(coll, sprintf("tables/bus-line-%d.csv", line), "text/csv", csvBytes(rows))
	}
}

type faqEntry struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Updated  string `json:"updated"`
	queries  []string
}

var faqs = map[string][]faqEntry{
	"account": {
		{Question: "How do I change my email address?", Answer: "Go to Account > Profile, enter the new address and confirm it from the link we send to it.", queries: []string{"update email on my account", "change the email I log in with"}},
		{Question: "How do I delete my account?", Answer: "Send a deletion request from Account > Privacy; the account and its data are erased within 30 days.", queries: []string{"close my account permanently", "remove my account and data"}},
		{Question: "I forgot my password", Answer: "Use the Forgot password link on the sign-in page; the reset link is valid for 1 hour.", queries: []string{"password reset link expired", "can't remember my password"}},
		{Question: "Can I have two accounts?", Answer: "Each email address can belong to one account only; support can merge two accounts for you.", queries: []string{"merge two accounts", "I have two accounts with different emails"}},
		{Question: "Why is my account locked?", Answer: "After 5 failed sign-in attempts the account is locked for 15 minutes.", queries: []string{"account locked after wrong password", "how long is my account locked for"}},
		{Question: "How do I turn on two-step verification?", Answer: "Open Account > Security and choose Two-step verification; you can use an authenticator app or SMS codes.", queries: []string{"enable 2fa on my account", "set up authenticator app"}},
	},
	"billing": {
		{Question: "Which payment methods do you accept?", Answer: "We accept Visa, Mastercard, American Express, PayPal and Apple Pay; we do not accept cheques.", queries: []string{"can I pay with paypal", "do you take amex"}},
		{Question: "When is my card charged?", Answer: "Your card is charged when the order ships, not when you place it.", queries: []string{"why haven't I been charged yet", "when do you take the payment"}},
		{Question: "Can I pay in instalments?", Answer: "Orders over $150 can be split into 4 interest-free instalments with Klarna at checkout.", queries: []string{"buy now pay later", "split payment into installments"}},
		{Question: "How do I get an invoice?", Answer: "Invoices are emailed when the order ships and can be downloaded from Orders > Invoice.", queries: []string{"download invoice for my order", "I need a VAT invoice"}},
		{Question: "Why was I charged twice?", Answer: "A second charge is usually a temporary authorisation hold that disappears within 3 to 5 business days.", queries: []string{"double charge on my card", "charged two times for one order"}},
		{Question: "Do you charge sales tax?", Answer: "Sales tax is calculated at checkout from the delivery address and shown before you pay.", queries: []string{"is tax included in the price", "how is sales tax calculated"}},
	},
	"orders": {
		{Question: "Can I change my order after placing it?", Answer: "Orders can be changed or cancelled within 1 hour of being placed, from Orders > Edit.", queries: []string{"modify order after checkout", "cancel my order"}},
		{Question: "How do I track my order?", Answer: "The tracking link is in the shipping confirmation email and under Orders > Track.", queries: []string{"where is my package", "tracking number for my order"}},
		{Question: "An item is missing from my order", Answer: "Items from different warehouses can arrive separately; check the shipping email for a second parcel before contacting us.", queries: []string{"only got part of my order", "package missing items"}},
		{Question: "My item arrived damaged", Answer: "Send us photos within 48 hours of delivery and we will send a replacement at no cost.", queries: []string{"received a broken item", "product damaged in shipping"}},
		{Question: "Can I order by phone?", Answer: "Yes, call 0800 555 0199 from 9 am to 6 pm, Monday to Friday.", queries: []string{"phone order number", "place an order over the phone"}},
		{Question: "Do you offer gift wrapping?", Answer: "Gift wrapping costs $4 per item and can be chosen at checkout; prices are left off the packing slip.", queries: []string{"can you wrap my present", "gift wrap cost"}},
	},
	"delivery": {
		{Question: "Do you ship internationally?", Answer: "We ship to 40 countries; see the shipping rates table for prices and delivery times.", queries: []string{"do you deliver abroad", "international shipping available"}},
		{Question: "Can I choose a delivery day?", Answer: "Named-day delivery is available for $6.95 in mainland areas; pick the day at checkout.", queries: []string{"deliver on a specific date", "choose delivery date"}},
		{Question: "What if I'm not at home?", Answer: "The courier leaves a card and tries again the next business day; after two attempts the parcel goes to the nearest pick-up point.", queries: []string{"missed my delivery", "nobody home for delivery"}},
		{Question: "Can someone else sign for my parcel?", Answer: "Yes, a neighbour can sign for it unless you chose signature by the addressee only.", queries: []string{"can my neighbour accept my package", "who can sign for delivery"}},
		{Question: "Do you deliver on weekends?", Answer: "Saturday delivery is available in most cities for $9.95; we do not deliver on Sundays.", queries: []string{"saturday delivery", "weekend shipping"}},
		{Question: "Can I pick up my order in store?", Answer: "Choose Click and Collect at checkout and pick up your order from 3 pm the next day; it is held for 7 days.", queries: []string{"collect order from shop", "in-store pickup"}},
	},
	"app": {
		{Question: "Which phones does the app support?", Answer: "The app runs on iOS 16 or later and Android 10 or later.", queries: []string{"is the app available on android", "app minimum ios version"}},
		{Question: "Why don't I get notifications?", Answer: "Allow notifications for the app in your phone's settings and turn them on in the app under Profile > Notifications.", queries: []string{"not getting push notifications", "app alerts not working"}},
		{Question: "How do I scan a product?", Answer: "Tap the camera icon on the home screen and point it at the barcode on the price label.", queries: []string{"scan barcode in app", "use camera to look up a product"}},
		{Question: "Can I use the app offline?", Answer: "Your saved lists and receipts are available offline; search and checkout need a connection.", queries: []string{"does the app work without internet", "offline mode"}},
		{Question: "How do I delete my saved cards from the app?", Answer: "Go to Profile > Payment methods, swipe left on the card and tap Remove.", queries: []string{"remove credit card from app", "delete payment method"}},
		{Question: "The app keeps crashing", Answer: "Update to the latest version; if it still crashes, reinstall it, which keeps your account data.", queries: []string{"app crashes on startup", "app keeps closing"}},
	},
	"membership": {
		{Question: "How much does Plus membership cost?", Answer: "Plus membership costs $49 a year or $5 a month and can be cancelled at any time.", queries: []string{"price of plus membership", "annual membership fee"}},
		{Question: "What do Plus members get?", Answer: "Plus members get free standard shipping on every order, early access to sales and 60-day returns.", queries: []string{"benefits of plus", "is shipping free with membership"}},
		{Question: "How do I cancel Plus?", Answer: "Cancel Plus from Account > Membership; you keep the benefits until the end of the paid period.", queries: []string{"stop my membership", "cancel subscription"}},
		{Question: "Is there a free trial?", Answer: "New members can try Plus free for 30 days; we remind you 3 days before the trial ends.", queries: []string{"plus trial period", "try membership for free"}},
		{Question: "Can I share my membership?", Answer: "One membership covers up to 4 people living at the same address.", queries: []string{"add family to membership", "share plus with my partner"}},
		{Question: "Is there a student discount?", Answer: "Students with a valid student email address pay half price for Plus.", queries: []string{"student discount membership", "plus for students"}},
	},
}

// json writes the JSON collection: 6 FAQ lists, 7 book catalogues, 7
// event listings.
func (g *gen) json() {
	const coll = "json"
	for _, topic := range []string{"account", "billing", "orders", "delivery", "app", "membership"} {
		es := faqs[topic]
		for i := range es {
			es[i].Updated = sprintf("2025-%02d-%02d", 1+g.r.IntN(12), 1+g.r.IntN(28))
			g.fact(coll, es[i].Answer, append([]string{es[i].Question}, es[i].queries...)...)
		}
		b, _ := json.MarshalIndent(es, "", "  ")
		g.doc(coll, "faq/"+topic+".json", "application/json", string(b))
	}

	adjs := []string{"Silent", "Hidden", "Last", "Golden", "Broken", "Distant", "Winter", "Paper", "Salt", "Iron", "Glass", "Lost",
		"Northern", "Quiet", "Burning", "Summer", "Painted", "Hollow", "Velvet", "Electric"}
	nouns := []string{"Orchard", "Harbour", "Lighthouse", "Garden", "Letters", "Kingdom", "River", "Archive", "Island", "Map",
		"Mirror", "Forest", "Bridge", "Station", "Hours", "Compass", "Meridian", "Season", "Atlas", "Violin"}
	genres := []string{"Literary fiction", "Crime", "Science fiction", "History", "Travel writing", "Poetry", "Biography"}
	people := map[string]bool{}
	usedT := map[string]bool{}
	for _, genre := range genres {
		type book struct {
			Title     string   `json:"title"`
			Author    string   `json:"author"`
			Published int      `json:"published"`
			Pages     int      `json:"pages"`
			ISBN      string   `json:"isbn"`
			Formats   []string `json:"formats"`
			Price     string   `json:"price"`
		}
		var books []book
		for range 20 {
			var t string
			for {
				t = "The " + g.pick(adjs) + " " + g.pick(nouns)
				if !usedT[t] {
					break
				}
			}
			usedT[t] = true
			fm := [][]string{{"hardcover", "ebook"}, {"paperback", "ebook", "audiobook"}, {"paperback"}, {"hardcover", "paperback"}}[g.r.IntN(4)]
			bk := book{Title: t, Author: g.person(people), Published: 1950 + g.r.IntN(75), Pages: 120 + g.r.IntN(600),
				ISBN: sprintf("978-%d-%04d-%04d-%d", g.r.IntN(10), g.r.IntN(10000), g.r.IntN(10000), g.r.IntN(10)), Formats: fm,
				Price: sprintf("$%d.99", 8+g.r.IntN(25))}
			books = append(books, bk)
			g.fact(coll, "title: "+t, "Who wrote "+t+"?", t+" author", "how many pages is "+t, "is "+t+" available as an ebook",
				"when was "+t+" published", t+" isbn")
		}
		b, _ := json.MarshalIndent(books, "", "  ")
		g.doc(coll, "books/"+slug(genre)+".json", "application/json", string(b))
	}

	first := []string{"Harbour Lights", "Midsummer", "Old Town", "Riverside", "Northern Lights", "Golden Hour", "Winter Garden",
		"Open Air", "Night Market", "Blue Moon", "Lantern", "Spring Bloom", "Sunset", "Canal", "Hilltop"}
	kinds := []string{"Jazz", "Food", "Film", "Folk", "Book", "Craft Beer", "Comedy", "Classical", "Street Art", "Electronic"}
	ends := []string{"Festival", "Fair", "Weekend", "Nights"}
	months := []string{"March", "April", "May", "June", "July", "August", "September", "October"}
	usedE := map[string]bool{}
	for _, town := range []string{"Leeds", "Bristol", "Norwich", "Brighton", "York", "Bath", "Cambridge"} {
		type event struct {
			Name    string `json:"name"`
			Dates   string `json:"dates"`
			Venue   string `json:"venue"`
			Tickets string `json:"tickets"`
			Ages    string `json:"ages"`
		}
		var b strings.Builder
		b.WriteString("{\n")
		for e := range 15 {
			var n string
			for {
				n = g.pick(first) + " " + g.pick(kinds) + " " + g.pick(ends)
				if !usedE[n] {
					break
				}
			}
			usedE[n] = true
			d := 1 + g.r.IntN(25)
			ev := event{Name: n, Dates: sprintf("%d-%d %s", d, d+1+g.r.IntN(2), g.pick(months)),
				Venue:   g.pick([]string{"Town Hall", "Victoria Park", "the Corn Exchange", "the Old Brewery", "Castle Gardens", "the Riverside Arena"}) + ", " + town,
				Tickets: []string{"free", "£12", "£18", "£25", "£35 weekend pass"}[g.r.IntN(5)], Ages: []string{"all ages", "18+", "under 12s free"}[g.r.IntN(3)]}
			v, _ := json.MarshalIndent(ev, "  ", "  ")
			sep := ","
			if e == 14 {
				sep = ""
			}
			b.WriteString(sprintf("  %q: %s%s\n", slug(n), v, sep))
			g.fact(coll, "name: "+n, "When is the "+n+"?", n+" ticket price", "where is the "+n+" held", n+" dates", "can kids go to the "+n)
		}
		b.WriteString("}\n")
		g.doc(coll, "events/"+slug(town)+".json", "application/json", b.String())
	}
}
