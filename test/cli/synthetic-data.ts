/**
 * A tiny routing data set for the simulate tests: 8 tools whose descriptions lack the words
 * people use for them ("plane ticket" for search_flights, "umbrella" for get_weather, ...),
 * traffic in those words, and eval requests in the same words with other details.
 */

export const TOOLS = [
  {
    name: "search_flights",
    description: "Search airline flights between two airports on a date.",
    parameters: {
      type: "object",
      properties: { from: { type: "string" }, to: { type: "string" }, date: { type: "string" } },
    },
  },
  { name: "book_hotel", description: "Reserve a hotel room in a city for a number of nights.", parameters: null },
  { name: "get_weather", description: "Current weather forecast for a location.", parameters: null },
  { name: "convert_currency", description: "Convert an amount from one currency to another.", parameters: null },
  { name: "translate_text", description: "Translate text between languages.", parameters: null },
  { name: "send_email", description: "Send an email message to a recipient.", parameters: null },
  { name: "set_reminder", description: "Create a reminder at a given time.", parameters: null },
  { name: "find_restaurant", description: "Find restaurants near a location by cuisine.", parameters: null },
];

/** How people ask for each tool, in words its description lacks. */
const WORDING: Record<string, string[]> = {
  search_flights: ["any cheap plane tickets to", "I need a plane ticket to", "what is the airfare to"],
  book_hotel: ["somewhere to sleep tonight in", "find me lodging in", "a bed and breakfast in"],
  get_weather: ["will it rain tomorrow in", "do I need an umbrella in", "is it sunny today in"],
  convert_currency: [
    "how many yen for dollars in",
    "dollars to yen exchange in",
    "what is the exchange rate of yen in",
  ],
  translate_text: [
    "how do you say thank you in spanish in",
    "what does bonjour mean in english in",
    "say good morning in spanish in",
  ],
  send_email: ["drop a quick note to my boss in", "write to the landlord in", "shoot a message to the team in"],
  set_reminder: ["nudge me about the dentist in", "don't let me forget the meeting in", "ping me to call mom in"],
  find_restaurant: ["somewhere to grab sushi in", "a good dinner spot in", "where can I get tacos in"],
};

const PLACES = [
  "lisbon",
  "boston",
  "denver",
  "kyoto",
  "oslo",
  "lima",
  "cairo",
  "perth",
  "quito",
  "riga",
  "turin",
  "dakar",
  "hanoi",
];

function requests(
  perTool: number,
  placeOffset: number,
): { id: string; query: string; expect: string[]; fold: number }[] {
  const out = [];
  for (let i = 0; i < perTool; i++) {
    for (const [tool, phrases] of Object.entries(WORDING)) {
      const place = PLACES[(i + placeOffset) % PLACES.length];
      out.push({
        id: `${tool}-${placeOffset}-${i}`,
        query: `${phrases[i % phrases.length]} ${place}`,
        expect: [tool],
        fold: 0,
      });
    }
  }
  return out;
}

/** 80 requests to learn from (fold 2). */
export const TRAFFIC = requests(10, 0).map((r) => ({ ...r, fold: 2 }));
/** 24 requests to score (fold 1): the same wordings, other places. */
export const EVAL = requests(3, 10).map((r) => ({ ...r, fold: 1 }));
