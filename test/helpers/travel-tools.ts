/** Seven tools of a travel assistant and requests for them: the fixture of the index tests. */
export const TRAVEL_TOOLS = [
  { name: "search_flights", description: "Search flights between two airports on a given date and compare fares" },
  { name: "book_hotel", description: "Reserve a hotel room in a city for check-in and check-out dates" },
  { name: "get_weather", description: "Current weather conditions and the forecast for a city" },
  { name: "send_email", description: "Send an email message with a subject and body to a contact" },
  { name: "convert_currency", description: "Convert an amount from one currency to another at today's exchange rate" },
  { name: "track_package", description: "Track a parcel shipment by its tracking number" },
  { name: "github.create_issue", description: "Open an issue in a GitHub repository" },
];

/** Requests, each meant for one of {@link TRAVEL_TOOLS}. */
export const TRAVEL_REQUESTS = [
  "a room in Rome for next weekend",
  "will it rain tomorrow",
  "where is my parcel",
  "open a bug report on the repo",
  "100 dollars in euros",
];
