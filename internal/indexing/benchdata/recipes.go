package benchdata

import "strings"

// dish is a recipe: how it is cooked ("oven", "stove", "chill" or "none"),
// its final step, and what the storage and tips sections say.
type dish struct {
	name        string
	how         string
	final       string // the cooking step, naming the dish
	serves      int
	prep        int // minutes
	fridge      int // days it keeps; 0: eat it the same day
	freeze      int // months it freezes; 0: it does not freeze
	ingredients []string
	from, to    string // "No {from}? Use {to} instead."
}

var dishes = []dish{
	{"banana bread", "oven", "Bake the banana bread at 180°C for 55 minutes, until a skewer pushed into the middle comes out clean.", 10, 15, 5, 3,
		[]string{"3 ripe bananas", "250 g plain flour", "100 g butter", "150 g brown sugar", "2 eggs", "1 tsp baking soda", "50 g walnuts"}, "walnuts", "pecans or chocolate chips"},
	{"red lentil soup", "stove", "Simmer the lentil soup for 25 minutes, until the lentils fall apart, then blend half of it.", 6, 10, 4, 6,
		[]string{"250 g red lentils", "1 onion", "2 carrots", "3 garlic cloves", "2 tsp ground cumin", "1.5 l vegetable stock", "1 lemon"}, "vegetable stock", "chicken stock"},
	{"chicken tikka masala", "stove", "Simmer the tikka masala for 20 minutes, until the chicken is cooked through and the sauce has thickened.", 4, 20, 3, 3,
		[]string{"600 g chicken thighs", "150 g plain yogurt", "2 tbsp garam masala", "400 g chopped tomatoes", "100 ml double cream", "thumb of ginger", "4 garlic cloves"}, "double cream", "coconut cream"},
	{"margherita pizza", "oven", "Bake the pizza at 250°C for 8 to 10 minutes on the hottest shelf, until the crust is blistered.", 2, 20, 2, 1,
		[]string{"250 g pizza dough", "100 ml tomato passata", "125 g mozzarella", "fresh basil", "olive oil"}, "pizza stone", "an upturned baking tray heated in the oven"},
	{"beef stew", "oven", "Braise the beef stew in the oven at 160°C for 2 hours 30 minutes, until the beef is tender.", 6, 25, 3, 3,
		[]string{"1 kg beef chuck", "3 carrots", "500 g potatoes", "2 onions", "250 ml red wine", "500 ml beef stock", "fresh thyme"}, "red wine", "more stock with a tablespoon of balsamic vinegar"},
	{"vegetable lasagne", "oven", "Bake the lasagne at 190°C for 40 minutes, covered with foil for the first 20 minutes.", 6, 30, 3, 3,
		[]string{"12 lasagne sheets", "2 courgettes", "200 g spinach", "250 g ricotta", "700 ml tomato sauce", "50 g parmesan"}, "ricotta", "cottage cheese"},
	{"buttermilk pancakes", "stove", "Fry the pancakes for about 2 minutes on each side, flipping when bubbles appear on the surface.", 4, 10, 2, 2,
		[]string{"200 g plain flour", "300 ml buttermilk", "2 eggs", "2 tsp baking powder", "30 g melted butter", "maple syrup"}, "buttermilk", "milk with a tablespoon of lemon juice stirred in"},
	{"guacamole", "none", "Mash the avocados with a fork, leaving some chunks, and stir everything together just before serving.", 4, 10, 1, 0,
		[]string{"3 ripe avocados", "1 lime", "half a red onion", "fresh coriander", "1 green chilli", "salt"}, "lime", "lemon juice"},
	{"ratatouille", "oven", "Roast the ratatouille at 200°C for 45 minutes, stirring once halfway through.", 4, 20, 4, 3,
		[]string{"1 aubergine", "2 courgettes", "2 red peppers", "4 tomatoes", "1 onion", "1 tbsp herbes de Provence"}, "herbes de Provence", "dried thyme and oregano"},
	{"shakshuka", "stove", "Crack the eggs into the sauce and cook the shakshuka covered for 6 to 8 minutes, until the whites are set.", 3, 10, 0, 0,
		[]string{"6 eggs", "800 g chopped tomatoes", "2 red peppers", "1 onion", "1 tsp smoked paprika", "1 tsp cumin", "100 g feta"}, "feta", "goat cheese"},
	{"carrot cake", "oven", "Bake the carrot cake at 170°C for 35 minutes, then cool it completely before icing.", 12, 25, 5, 3,
		[]string{"300 g grated carrots", "250 g self-raising flour", "3 eggs", "200 ml sunflower oil", "200 g brown sugar", "2 tsp cinnamon", "200 g cream cheese"}, "sunflower oil", "apple sauce for half of the oil"},
	{"mushroom risotto", "stove", "Cook the risotto for 18 to 20 minutes, adding the hot stock a ladle at a time and stirring often.", 4, 10, 1, 0,
		[]string{"300 g arborio rice", "400 g mushrooms", "1 onion", "150 ml dry white wine", "1 l hot stock", "60 g parmesan", "30 g butter"}, "white wine", "dry vermouth"},
	{"pad thai", "stove", "Stir-fry the pad thai over high heat for 3 to 4 minutes, until the noodles are soft and coated in sauce.", 2, 20, 2, 0,
		[]string{"200 g flat rice noodles", "200 g prawns", "2 eggs", "100 g bean sprouts", "2 tbsp tamarind paste", "2 tbsp fish sauce", "roasted peanuts"}, "prawns", "firm tofu"},
	{"falafel", "stove", "Deep-fry the falafel in oil at 175°C for 3 to 4 minutes, until deep golden.", 4, 25, 3, 2,
		[]string{"250 g dried chickpeas, soaked overnight", "1 onion", "a bunch of parsley", "a bunch of coriander", "3 garlic cloves", "2 tsp ground cumin"}, "deep-frying", "baking them at 200°C for 25 minutes, turning once"},
	{"French onion soup", "stove", "Cook the onions slowly for 45 minutes until deep brown, then simmer the soup with the stock for 20 minutes.", 4, 15, 3, 3,
		[]string{"1 kg onions", "50 g butter", "1.2 l beef stock", "fresh thyme", "1 baguette", "150 g gruyere"}, "gruyere", "emmental or comte"},
	{"apple crumble", "oven", "Bake the crumble at 190°C for 35 minutes, until the topping is golden and the fruit bubbles at the edges.", 6, 20, 3, 3,
		[]string{"1 kg cooking apples", "150 g plain flour", "100 g cold butter", "100 g sugar", "50 g rolled oats", "1 tsp cinnamon"}, "apples", "pears or rhubarb"},
	{"chili con carne", "stove", "Simmer the chili for 1 hour 30 minutes with the lid ajar, stirring now and then.", 6, 15, 3, 4,
		[]string{"500 g beef mince", "2 cans kidney beans", "800 g chopped tomatoes", "1 onion", "2 tsp chilli powder", "1 tsp cumin"}, "beef mince", "cooked green lentils"},
	{"tomato bruschetta", "none", "Toast the ciabatta slices under the grill for 2 minutes, rub them with garlic and spoon the tomatoes on top.", 4, 15, 0, 0,
		[]string{"1 ciabatta", "4 ripe tomatoes", "1 garlic clove", "fresh basil", "extra virgin olive oil"}, "ciabatta", "sourdough or a baguette"},
	{"lemon drizzle cake", "oven", "Bake the lemon drizzle cake at 180°C for 45 minutes, then pour the lemon syrup over it while it is still warm.", 10, 15, 4, 2,
		[]string{"225 g butter", "225 g caster sugar", "4 eggs", "225 g self-raising flour", "2 lemons", "85 g icing sugar"}, "self-raising flour", "plain flour with 3 teaspoons of baking powder"},
	{"miso ramen", "stove", "Simmer the ramen broth for 15 minutes, whisk in the miso off the heat and pour it over the cooked noodles.", 2, 15, 2, 3,
		[]string{"2 portions ramen noodles", "3 tbsp white miso", "1 l chicken stock", "2 eggs", "2 spring onions", "1 sheet nori", "sesame oil"}, "chicken stock", "vegetable stock with a piece of kombu"},
	{"Greek salad", "none", "Toss the Greek salad with olive oil and oregano and put the feta on top in one piece.", 4, 15, 1, 0,
		[]string{"4 tomatoes", "1 cucumber", "1 red onion", "1 green pepper", "100 g kalamata olives", "200 g feta", "dried oregano"}, "kalamata olives", "any black olives"},
	{"roast chicken thighs", "oven", "Roast the chicken thighs at 200°C for 40 minutes, until the skin is crisp and the juices run clear.", 4, 10, 3, 2,
		[]string{"8 chicken thighs", "500 g new potatoes", "1 lemon", "1 garlic bulb", "fresh rosemary", "olive oil"}, "rosemary", "thyme"},
	{"sourdough loaf", "oven", "Bake the sourdough loaf in a lidded pot at 240°C for 20 minutes, then uncovered for 25 minutes more.", 12, 30, 3, 3,
		[]string{"500 g strong white flour", "100 g active sourdough starter", "350 ml water", "10 g salt"}, "lidded pot", "a baking tray with a tray of boiling water below it"},
	{"chocolate brownies", "oven", "Bake the brownies at 180°C for 25 minutes; they should still wobble slightly in the middle.", 16, 15, 5, 3,
		[]string{"200 g dark chocolate", "175 g butter", "325 g caster sugar", "3 eggs", "130 g plain flour", "50 g cocoa powder"}, "dark chocolate", "milk chocolate with 20 g less sugar"},
	{"fish tacos", "stove", "Fry the fish for 3 minutes on each side, until it flakes easily, then break it into the warm tortillas.", 4, 20, 1, 0,
		[]string{"500 g white fish fillets", "8 corn tortillas", "quarter of a red cabbage", "1 lime", "100 g sour cream", "1 tsp smoked paprika"}, "sour cream", "Greek yogurt"},
	{"minestrone", "stove", "Simmer the minestrone for 30 minutes, adding the pasta for the last 10 minutes.", 6, 20, 4, 3,
		[]string{"1 onion", "2 carrots", "2 celery sticks", "400 g chopped tomatoes", "1 can cannellini beans", "100 g small pasta", "1.5 l vegetable stock"}, "small pasta", "rice"},
	{"seafood paella", "stove", "Cook the paella without stirring for 20 minutes, then rest it under a tea towel for 5 minutes.", 6, 25, 1, 0,
		[]string{"400 g paella rice", "300 g prawns", "300 g mussels", "1 pinch saffron", "1 red pepper", "1.2 l fish stock", "1 tsp smoked paprika"}, "saffron", "half a teaspoon of turmeric"},
	{"quiche lorraine", "oven", "Bake the quiche at 180°C for 35 minutes, until the filling is just set.", 6, 25, 3, 2,
		[]string{"1 shortcrust pastry case", "200 g smoked bacon lardons", "3 eggs", "300 ml double cream", "100 g gruyere", "nutmeg"}, "double cream", "whole milk with an extra egg"},
	{"butternut squash soup", "stove", "Simmer the squash soup for 25 minutes, until the squash is soft, then blend until smooth.", 4, 15, 4, 3,
		[]string{"1 butternut squash", "1 onion", "2 garlic cloves", "1 l vegetable stock", "100 ml coconut milk", "1 tsp chilli flakes"}, "coconut milk", "single cream"},
	{"cinnamon rolls", "oven", "Bake the cinnamon rolls at 190°C for 22 minutes, then spread the icing over them while they are warm.", 12, 40, 2, 2,
		[]string{"500 g strong white flour", "7 g dried yeast", "250 ml warm milk", "75 g butter", "100 g brown sugar", "2 tbsp ground cinnamon"}, "dried yeast", "14 g fresh yeast"},
	{"pesto pasta", "stove", "Cook the pasta for 10 minutes, keep a cup of the cooking water and toss the pasta with the pesto, adding water until glossy.", 4, 10, 2, 0,
		[]string{"400 g spaghetti", "50 g basil", "30 g pine nuts", "50 g parmesan", "1 garlic clove", "100 ml olive oil"}, "pine nuts", "walnuts or sunflower seeds"},
	{"beef burgers", "stove", "Grill the burgers for 4 minutes on each side for medium, and let them rest for 2 minutes.", 4, 15, 1, 3,
		[]string{"600 g beef mince", "1 small onion", "1 egg yolk", "4 burger buns", "4 slices cheddar", "lettuce and tomato"}, "egg yolk", "2 tablespoons of breadcrumbs soaked in milk"},
	{"hummus", "none", "Blend the hummus for 3 to 4 minutes, until very smooth, adding ice water a spoonful at a time.", 6, 10, 5, 2,
		[]string{"2 cans chickpeas", "4 tbsp tahini", "1 lemon", "1 garlic clove", "ice water", "olive oil"}, "tahini", "smooth peanut butter"},
	{"tiramisu", "chill", "Chill the tiramisu in the fridge for at least 6 hours, or overnight, before dusting it with cocoa.", 8, 30, 3, 1,
		[]string{"250 g mascarpone", "3 eggs", "75 g caster sugar", "200 g sponge fingers", "300 ml strong coffee", "cocoa powder"}, "mascarpone", "cream cheese whipped with double cream"},
	{"gazpacho", "chill", "Chill the gazpacho for at least 2 hours and serve it very cold.", 4, 15, 3, 0,
		[]string{"1 kg ripe tomatoes", "1 cucumber", "1 red pepper", "1 garlic clove", "2 tbsp sherry vinegar", "100 ml olive oil"}, "sherry vinegar", "red wine vinegar"},
	{"stuffed peppers", "oven", "Bake the stuffed peppers at 190°C for 35 minutes, covered for the first 20 minutes.", 4, 20, 3, 2,
		[]string{"4 red peppers", "200 g cooked rice", "250 g beef mince", "400 g chopped tomatoes", "100 g grated cheddar"}, "beef mince", "black beans"},
	{"scones", "oven", "Bake the scones at 220°C for 12 minutes, until risen and golden on top.", 8, 15, 2, 1,
		[]string{"350 g self-raising flour", "85 g cold butter", "3 tbsp caster sugar", "175 ml milk", "1 tsp lemon juice", "1 beaten egg"}, "milk", "buttermilk"},
	{"teriyaki salmon", "oven", "Roast the salmon at 200°C for 12 minutes, brushing it with the teriyaki glaze halfway through.", 2, 10, 2, 0,
		[]string{"2 salmon fillets", "3 tbsp soy sauce", "2 tbsp mirin", "1 tbsp honey", "thumb of ginger", "sesame seeds"}, "mirin", "rice vinegar with a teaspoon of sugar"},
	{"moussaka", "oven", "Bake the moussaka at 180°C for 50 minutes, then let it stand for 15 minutes before cutting.", 6, 45, 3, 3,
		[]string{"2 aubergines", "500 g lamb mince", "400 g chopped tomatoes", "1 tsp cinnamon", "500 ml white sauce", "50 g parmesan"}, "lamb mince", "beef mince"},
	{"oatmeal cookies", "oven", "Bake the cookies at 175°C for 12 minutes; they firm up as they cool on the tray.", 24, 15, 7, 3,
		[]string{"115 g butter", "150 g brown sugar", "1 egg", "120 g plain flour", "150 g rolled oats", "100 g raisins"}, "raisins", "dried cranberries or chocolate chips"},
}

var recipeIntros = []string{
	"A reliable family favourite that works every time.",
	"Easy enough for a weeknight and good enough for guests.",
	"This version keeps things simple without losing any flavour.",
	"One of the most requested recipes on our site.",
}

// recipes writes 40 recipes (Markdown).
func (g *gen) recipes() {
	const coll = "recipes"
	for _, d := range dishes {
		var b strings.Builder
		w := func(format string, args ...any) { b.WriteString(sprintf(format, args...)) }
		name := title(d.name)
		w("# %s\n\n%s\n\n", name, g.pick(recipeIntros))
		serves := sprintf("This %s recipe serves %d. Preparation takes %d minutes.", d.name, d.serves, d.prep)
		w("%s\n\n", serves)
		g.fact(coll, serves, expandAll([]string{"How many people does the {S} recipe serve?", "{S} servings", "how many portions does the {S} make", "how many people will the {S} feed", "how long to prepare {S}"}, d.name)...)

		lead := sprintf("For the %s you will need:", d.name)
		w("## Ingredients\n\n%s\n\n", lead)
		for _, in := range d.ingredients {
			w("- %s\n", in)
		}
		w("\n")
		ing := d.ingredients[g.r.IntN(len(d.ingredients))]
		ing, _, _ = strings.Cut(ing, ",")
		ing = ing[strings.LastIndex(ing, " ")+1:]
		g.fact(coll, lead, expandAll([]string{"What ingredients do I need for {S}?", "{S} ingredients", "ingredients list for {S}", "how much " + ing + " for {S}"}, d.name)...)

		w("## Method\n\n1. Weigh out all the ingredients before you start.\n2. Prepare the %s and the %s.\n3. Combine them with the rest of the ingredients as described above.\n4. %s\n\n",
			strip(d.ingredients[0]), strip(d.ingredients[1]), d.final)
		var qs []string
		switch d.how {
		case "oven":
			verb := strings.ToLower(strings.Fields(d.final)[0])
			qs = []string{"How long do I " + verb + " the {S}?", "what temperature do I " + verb + " {S} at", "{S} oven temperature", "how long does {S} take in the oven",
				"how long should the {S} be " + strings.TrimSuffix(verb, "e") + "ed"}
		case "stove":
			qs = []string{"How long do I cook the {S}?", "{S} cooking time", "how long does {S} take to cook"}
		case "chill":
			qs = []string{"How long does the {S} need to chill?", "how long in the fridge before serving {S}", "{S} setting time"}
		default:
			qs = []string{"How do I make {S}?", "{S} last step", "{S} method"}
		}
		g.fact(coll, d.final, expandAll(qs, d.name)...)

		var st string
		switch {
		case d.fridge == 0:
			st = sprintf("The %s is best eaten straight away; it does not keep well.", d.name)
		case d.freeze == 0:
			st = sprintf("Leftover %s keeps in a covered container in the fridge for up to %d days. It does not freeze well.", d.name, d.fridge)
		default:
			st = sprintf("Leftover %s keeps in a covered container in the fridge for up to %d days, and freezes well for up to %d months; thaw it overnight in the fridge.", d.name, d.fridge, d.freeze)
		}
		w("## Storage\n\n%s\n\n", st)
		g.fact(coll, st, expandAll([]string{"How long does {S} keep in the fridge?", "How long can {S} be kept in the fridge?", "Can I freeze {S}?", "can {S} be frozen", "{S} leftovers", "how long do leftovers of {S} last", "storing {S}"}, d.name)...)

		tip := sprintf("No %s? Use %s instead.", d.from, d.to)
		w("## Tips\n\n%s Every oven is different, so start checking a few minutes early.\n", tip)
		g.fact(coll, tip, expandAll([]string{"What can I use instead of " + d.from + " in {S}?", "{S} without " + d.from, "substitute for " + d.from + " in {S}"}, d.name)...)
		g.doc(coll, "recipes/"+slug(d.name)+".md", "text/markdown", b.String())
	}
}

// strip drops the quantity in front of an ingredient.
func strip(in string) string {
	ws := strings.Fields(in)
	for len(ws) > 1 && (strings.ContainsAny(ws[0], "0123456789") || ws[0] == "g" || ws[0] == "ml" || ws[0] == "tbsp" || ws[0] == "tsp" || ws[0] == "kg" || ws[0] == "l") {
		ws = ws[1:]
	}
	return strings.Join(ws, " ")
}
