package benchdata

import "strings"

type policy struct {
	title, owner, purpose string
	sections              []policySection
}

type policySection struct {
	heading, text string
	questions     []string
}

var policyList = []policy{
	{"Refund policy", "Customer Service", "This policy explains how and when we refund purchases.", []policySection{
		{"Refund timing", "Refunds are issued to the original payment method within 5 business days after we receive the returned item.",
			[]string{"When will I get my refund?", "how long do refunds take", "still waiting for my money back", "when will I be refunded", "returned an item, how long until I am refunded"}},
		{"Sale items", "Items bought on sale can be returned for store credit only, not for a refund to your card.",
			[]string{"Can I get a refund for something I bought on sale?", "return sale item"}},
		{"Return shipping", "Return shipping is free for customers in the EU; elsewhere a $7 label fee is deducted from the refund.",
			[]string{"Do I have to pay for return shipping?", "return label cost"}},
	}},
	{"Shipping policy", "Logistics", "This policy describes when orders ship and where we deliver.", []policySection{
		{"Dispatch", "Orders placed before 2 pm on a business day ship the same day; orders placed later ship the next business day.",
			[]string{"If I order today, when will it ship?", "same day shipping cutoff time", "when will my order be shipped"}},
		{"Delivery times", "Standard delivery within the country takes 2 to 4 business days after dispatch.",
			[]string{"How long does delivery take?", "standard delivery time"}},
		{"Restrictions", "We do not deliver to PO boxes or to parcel lockers.",
			[]string{"Can you deliver to a PO box?", "ship to parcel locker"}},
	}},
	{"Price match promise", "Sales", "This policy explains when we match a lower price.", []policySection{
		{"How it works", "If you find the same item cheaper at a major retailer within 14 days of your purchase, we refund the difference.",
			[]string{"I found it cheaper somewhere else after buying", "do you price match"}},
		{"Exclusions", "Marketplace sellers, clearance prices and member-only prices are excluded from price matching.",
			[]string{"Do you match Amazon marketplace prices?", "price match exclusions"}},
	}},
	{"Gift card terms", "Customer Service", "These terms apply to all gift cards we sell.", []policySection{
		{"Validity", "Gift cards never expire and can be used online and in all of our stores.",
			[]string{"Do gift cards expire?", "can I use a gift card online"}},
		{"Lost cards", "A lost gift card can be replaced only if you still have the original receipt.",
			[]string{"I lost my gift card", "replace lost gift card"}},
		{"Cash", "Gift cards cannot be exchanged for cash, except where the law requires it.",
			[]string{"Can I get cash for my gift card?", "gift card cash out"}},
	}},
	{"Loyalty programme rules", "Marketing", "These rules govern the Northwind Rewards programme.", []policySection{
		{"Earning points", "Members earn 1 point for every dollar spent, and 100 points can be redeemed for a $5 reward.",
			[]string{"How many points do I get per dollar?", "how much are loyalty points worth"}},
		{"Expiry", "Points expire if the account has no purchase for 12 months.",
			[]string{"Do my points expire?", "loyalty points expiry"}},
		{"Birthday bonus", "Members receive a bonus of 200 points in their birthday month.",
			[]string{"Do I get anything on my birthday?", "birthday points"}},
	}},
	{"Warranty claims procedure", "Customer Service", "This procedure explains how to claim under a product warranty.", []policySection{
		{"Making a claim", "To make a warranty claim, fill in the claim form with your order number and photos of the fault.",
			[]string{"How do I make a warranty claim?", "warranty claim form"}},
		{"Repair time", "Repairs under warranty take about 10 business days from the day we receive the product.",
			[]string{"How long does a warranty repair take?", "repair turnaround time"}},
		{"Replacement", "If a repair is not possible, we replace the product with the same or an equivalent model.",
			[]string{"What happens if my product can't be repaired?", "warranty replacement"}},
	}},
	{"Privacy notice", "Legal", "This notice explains what personal data we keep and your rights.", []policySection{
		{"Retention of orders", "We keep order records for 7 years because tax law requires it.",
			[]string{"How long do you keep my order history?", "why do you keep my orders for years"}},
		{"Your data", "You can ask for a copy of your personal data by emailing privacy@northwind.example; we answer within 30 days.",
			[]string{"How do I get a copy of my personal data?", "data access request"}},
		{"Selling data", "We never sell personal data to third parties.",
			[]string{"Do you sell my data?", "is my information shared with advertisers"}},
	}},
	{"Cookie policy", "Legal", "This policy explains the cookies our website sets.", []policySection{
		{"Consent", "Analytics cookies are set only after you accept them in the cookie banner.",
			[]string{"Do you use tracking cookies without consent?", "analytics cookies"}},
		{"Changing your choice", "You can change your cookie choices at any time from the Cookie settings link at the bottom of every page.",
			[]string{"How do I change my cookie settings?", "withdraw cookie consent"}},
	}},
	{"Travel and expenses policy", "Finance", "This policy applies to all business travel by employees.", []policySection{
		{"Flights", "Economy class is required for flights under 6 hours; business class may be booked for longer flights with your manager's approval.",
			[]string{"Can I fly business class?", "flight class rules for long flights"}},
		{"Hotels", "The hotel limit is $180 per night in most cities and $250 per night in New York, London and Tokyo.",
			[]string{"What is the hotel budget per night?", "hotel limit London"}},
		{"Receipts", "Submit your receipts in the expense tool within 30 days of returning from the trip.",
			[]string{"How long do I have to submit travel receipts?", "expense report deadline"}},
	}},
	{"Remote work policy", "People Team", "This policy sets out how employees may work away from the office.", []policySection{
		{"Eligibility", "Employees may work remotely up to 3 days a week once their probation period is over.",
			[]string{"How many days a week can I work from home?", "remote work during probation"}},
		{"Working abroad", "Working from another country is allowed for up to 20 working days per year and needs approval from the People Team.",
			[]string{"Can I work from another country?", "work abroad for a few weeks"}},
		{"Equipment allowance", "The company pays a one-time home office allowance of $500.",
			[]string{"Is there a budget for my home office?", "home office allowance"}},
	}},
	{"Parental leave policy", "People Team", "This policy describes leave for new parents.", []policySection{
		{"Entitlement", "Birthing parents get 20 weeks of fully paid leave; other parents get 12 weeks.",
			[]string{"How much parental leave do I get?", "paternity leave weeks"}},
		{"Splitting leave", "Leave can be taken in up to 3 blocks within the child's first year.",
			[]string{"Can I split my parental leave?", "take parental leave in parts"}},
		{"Notice", "Tell your manager at least 8 weeks before your leave starts.",
			[]string{"When do I need to tell my manager about parental leave?", "parental leave notice period"}},
	}},
	{"Sick leave policy", "People Team", "This policy explains what to do when you are ill.", []policySection{
		{"Reporting", "If you are sick, call your manager before your shift or working day starts.",
			[]string{"Who do I tell when I'm sick?", "calling in sick"}},
		{"Doctor's note", "A doctor's note is required from the fourth consecutive day of absence.",
			[]string{"When do I need a doctor's note?", "sick note required after how many days"}},
		{"Vacation", "Sick days do not reduce your vacation days, even if you fall ill during a holiday.",
			[]string{"I got sick on vacation, do I get the days back?", "sick during holiday"}},
	}},
	{"Vacation policy", "People Team", "This policy covers paid time off.", []policySection{
		{"Allowance", "Full-time employees get 25 vacation days per year in addition to public holidays.",
			[]string{"How many vacation days do I get?", "annual leave allowance"}},
		{"Carry over", "Up to 5 unused vacation days can be carried over to the next year; they expire on 31 March.",
			[]string{"Can I carry over unused vacation days?", "unused holiday next year"}},
		{"Requests", "Request vacation in the HR portal at least 2 weeks in advance.",
			[]string{"How do I request time off?", "how far in advance to book holiday"}},
	}},
	{"IT equipment policy", "IT", "This policy covers company laptops, phones and accessories.", []policySection{
		{"Laptops", "New employees receive a laptop on their first day, and laptops are replaced every 4 years.",
			[]string{"When will my laptop be replaced?", "laptop refresh cycle"}},
		{"Loss or theft", "Report lost or stolen equipment to the IT service desk within 24 hours.",
			[]string{"I lost my work laptop, what do I do?", "stolen laptop report"}},
		{"Software", "Software may be installed only from the company software catalogue.",
			[]string{"Can I install my own software?", "install programs on work laptop"}},
	}},
	{"Password policy", "IT Security", "This policy sets the rules for passwords and sign-in.", []policySection{
		{"Length", "Passwords must be at least 14 characters long; a phrase of several words is easiest to remember.",
			[]string{"How long does my password need to be?", "password minimum length"}},
		{"Rotation", "Passwords are not changed on a schedule; change yours only if you think it was exposed.",
			[]string{"Do I have to change my password every 90 days?", "password expiry"}},
		{"MFA", "Multi-factor authentication is mandatory for email, VPN and the HR portal.",
			[]string{"Is two-factor authentication required?", "mfa for vpn"}},
	}},
	{"Acceptable use policy", "IT Security", "This policy explains how company systems may be used.", []policySection{
		{"Personal use", "Company devices may be used for occasional personal browsing during breaks.",
			[]string{"Can I use my work laptop for personal stuff?", "personal browsing at work"}},
		{"Network", "Streaming video for leisure and peer-to-peer file sharing are not allowed on the office network.",
			[]string{"Can I watch Netflix on the office wifi?", "torrenting at work"}},
	}},
	{"Code of conduct", "Legal", "This code describes the behaviour we expect from everyone who works here.", []policySection{
		{"Gifts", "Gifts from suppliers worth more than $50 must be declined or reported to Legal.",
			[]string{"Can I accept a gift from a supplier?", "gift value limit"}},
		{"Conflicts of interest", "Disclose any conflict of interest, such as a relative working for a supplier, to your manager and to Legal.",
			[]string{"My brother works for one of our suppliers", "declare conflict of interest"}},
	}},
	{"Whistleblowing policy", "Legal", "This policy explains how to raise concerns about wrongdoing.", []policySection{
		{"Reporting channels", "Concerns can be reported anonymously through the ethics hotline, which is run by an independent company.",
			[]string{"How can I report something anonymously?", "ethics hotline"}},
		{"Protection", "Retaliation against anyone who reports a concern in good faith is a disciplinary offence.",
			[]string{"Will I get in trouble for reporting a concern?", "protection for whistleblowers"}},
	}},
	{"Overtime policy", "People Team", "This policy covers work beyond contracted hours.", []policySection{
		{"Approval", "Overtime must be approved in advance by your manager.",
			[]string{"Do I need approval for overtime?", "who approves overtime"}},
		{"Pay", "Overtime is paid at 150% of the hourly rate, or 200% on Sundays and public holidays.",
			[]string{"How much is overtime paid?", "overtime rate sunday"}},
		{"Time off in lieu", "Instead of overtime pay you can choose time off in lieu, one hour for each hour worked.",
			[]string{"Can I take time off instead of overtime pay?", "toil"}},
	}},
	{"Learning and development policy", "People Team", "This policy describes support for training.", []policySection{
		{"Budget", "Each employee has an annual training budget of $1,500 for courses, books and conferences.",
			[]string{"How much can I spend on training?", "conference budget per year"}},
		{"Carry over", "Unused training budget does not carry over to the next year.",
			[]string{"Does unused training budget roll over?", "training budget next year"}},
		{"Certifications", "Certification exams are reimbursed only when you pass them.",
			[]string{"Will the company pay for my certification exam?", "exam fee reimbursement"}},
	}},
	{"Expense reimbursement policy", "Finance", "This policy explains how out-of-pocket expenses are paid back.", []policySection{
		{"Payment", "Expenses submitted by the 20th of the month are reimbursed with that month's salary.",
			[]string{"When will my expenses be paid back?", "expense reimbursement date"}},
		{"Client meals", "Meals with clients are covered up to $75 per person, tax and tip included.",
			[]string{"What's the limit for client dinners?", "client meal expense limit"}},
		{"Alcohol", "Alcohol is not reimbursed, including at client meals.",
			[]string{"Can I expense drinks?", "is alcohol reimbursed"}},
	}},
	{"Relocation policy", "People Team", "This policy covers employees who move for their job.", []policySection{
		{"Package", "The relocation package covers moving costs up to $8,000 and one month of temporary housing.",
			[]string{"What does the relocation package include?", "relocation budget"}},
		{"Repayment", "If you leave within 12 months of relocating, you repay half of the relocation costs.",
			[]string{"Do I have to pay back relocation if I quit?", "relocation clawback"}},
	}},
	{"Onboarding guide", "People Team", "This guide describes the first months of a new employee.", []policySection{
		{"Buddy", "Every new hire gets a buddy who answers questions during the first three months.",
			[]string{"Who can I ask questions when I start?", "onboarding buddy"}},
		{"Probation", "The probation period lasts 6 months, with a review meeting at the end of month 3.",
			[]string{"How long is probation?", "probation review"}},
	}},
	{"Leaving the company", "People Team", "This guide explains what happens when you leave.", []policySection{
		{"Equipment", "Return your laptop, badge and any other company equipment on your last working day.",
			[]string{"What do I need to return when I leave?", "give back laptop last day"}},
		{"Notice period", "The notice period is 1 month during probation and 3 months after it.",
			[]string{"What is my notice period?", "how much notice do I have to give"}},
		{"Final pay", "Your final pay, including unused vacation days, comes with the next regular payroll.",
			[]string{"Do I get paid for unused vacation when I leave?", "final paycheck"}},
	}},
	{"Meeting room booking rules", "Facilities", "These rules apply to all bookable rooms.", []policySection{
		{"Booking", "Rooms are booked in the shared calendar; bookings longer than 4 hours need approval from Facilities.",
			[]string{"How do I book a meeting room for a whole day?", "meeting room booking"}},
		{"No-shows", "A room that is not used within 15 minutes of the booking start is released automatically.",
			[]string{"Why did my room booking disappear?", "room released no show"}},
	}},
	{"Visitor policy", "Facilities", "This policy applies to everyone who visits our offices.", []policySection{
		{"Registration", "Register visitors at reception by the day before their visit; they receive a visitor badge on arrival.",
			[]string{"How do I register a visitor?", "guest badge"}},
		{"Escort", "Visitors must be accompanied by their host at all times outside the lobby.",
			[]string{"Can visitors walk around on their own?", "escort visitors"}},
	}},
	{"Parking and commuting", "Facilities", "This policy covers parking, charging and bicycles at the head office.", []policySection{
		{"Parking spaces", "Parking spaces are assigned by lottery every quarter.",
			[]string{"How do I get a parking space?", "parking lottery"}},
		{"EV charging", "Electric vehicle chargers may be used for up to 4 hours at a time; move your car when it is charged.",
			[]string{"How long can I use the EV charger?", "electric car charging at the office"}},
		{"Bicycles", "Bicycles can be left in the basement bike room, which opens with your badge.",
			[]string{"Where can I park my bike?", "bike storage"}},
	}},
	{"Pets in stores", "Retail Operations", "This policy explains which animals may come into our stores.", []policySection{
		{"Dogs", "Dogs on a leash are welcome in all our stores, and assistance animals are always welcome.",
			[]string{"Can I bring my dog to the store?", "are dogs allowed in store"}},
		{"Cafe", "Pets are not allowed in the cafe area, except assistance animals.",
			[]string{"Can my dog come into the cafe?", "pets in cafe"}},
	}},
	{"Data retention schedule", "Legal", "This schedule says how long we keep each kind of record.", []policySection{
		{"Support tickets", "Customer support tickets are deleted 24 months after they are closed.",
			[]string{"How long do you keep support tickets?", "ticket data retention"}},
		{"Backups", "Backups of our systems are kept for 35 days.",
			[]string{"How long are backups kept?", "backup retention"}},
		{"Logs", "Server logs containing IP addresses are kept for 90 days.",
			[]string{"How long do you store IP addresses?", "log retention ip"}},
	}},
	{"Bring your own device policy", "IT Security", "This policy covers personal phones and tablets used for work.", []policySection{
		{"Enrolment", "Personal phones may access company email only if they are enrolled in device management.",
			[]string{"Can I read work email on my own phone?", "personal phone company email"}},
		{"Lost devices", "If a personal device is lost, IT can wipe the company data on it but not your personal photos or files.",
			[]string{"Will IT erase my whole phone if I lose it?", "remote wipe personal device"}},
	}},
}

// policies writes 30 policies (plain text, Setext-style headings).
func (g *gen) policies() {
	const coll = "policies"
	for i, p := range policyList {
		var b strings.Builder
		w := func(format string, args ...any) { b.WriteString(sprintf(format, args...)) }
		w("%s\n%s\n\nNorthwind Outfitters - owner: %s - version %d.%d\n\n", p.title, strings.Repeat("=", len(p.title)), p.owner, 1+i%3, g.r.IntN(10))
		w("Purpose\n-------\n\n%s It applies from 1 January and replaces all earlier versions.\n\n", p.purpose)
		for _, s := range p.sections {
			w("%s\n%s\n\n%s\n\n", s.heading, strings.Repeat("-", len(s.heading)), wrap(s.text, 72))
			g.fact(coll, s.text, s.questions...)
		}
		w("Questions about this policy go to the %s.\n", p.owner)
		g.doc(coll, "policies/"+slug(p.title)+".txt", "text/plain; charset=utf-8", b.String())
	}
}

// wrap breaks s into lines of at most width characters, as plain-text
// documents are.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
