import { AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

/**
 * A long, deterministic agent conversation for the examples: a system prompt,
 * earlier turns in which the agent called tools (some in parallel), and a
 * current task that is halfway through its own tool calls.
 */
export function longAgentConversation(turns = 12, stepsInTask = 4): BaseMessage[] {
  const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Accra", "Perth", "Lima", "Riga", "Dakar", "Kyoto", "Cusco", "Turin"];
  const messages: BaseMessage[] = [new SystemMessage("You are a travel agent. Use the tools to check weather and flights.")];
  for (let turn = 0; turn < turns; turn += 1) {
    const city = cities[turn % cities.length]!;
    messages.push(new HumanMessage(`Plan a weekend in ${city}. What will the weather be, and which flights are there?`));
    messages.push(
      new AIMessage({
        content: "",
        tool_calls: [
          { id: `weather-${turn}`, name: "weather", args: { city } },
          { id: `flights-${turn}`, name: "flights", args: { to: city, days: 2 } },
        ],
      }),
    );
    messages.push(new ToolMessage({ tool_call_id: `weather-${turn}`, content: `${city}: ${"sunny, 24°C, light wind; ".repeat(6)}` }));
    messages.push(
      new ToolMessage({
        tool_call_id: `flights-${turn}`,
        content: JSON.stringify(Array.from({ length: 8 }, (_, i) => ({ flight: `TP${100 + i}`, departs: `0${i}:15`, price: 90 + i * 7 }))),
      }),
    );
    messages.push(new AIMessage(`For ${city}: expect sunny weather. The cheapest flight is TP100 at 90 EUR.`));
  }
  messages.push(new HumanMessage("Now compare all of them and book the best option for next Friday."));
  for (let step = 0; step < stepsInTask; step += 1) {
    messages.push(new AIMessage({ content: "", tool_calls: [{ id: `compare-${step}`, name: "compare", args: { round: step } }] }));
    messages.push(new ToolMessage({ tool_call_id: `compare-${step}`, content: `round ${step}: ${"candidate scores 0.8, 0.7, 0.65; ".repeat(10)}` }));
  }
  return messages;
}

/** A short label for a message, for the tables the examples print. */
export function describeMessage(message: BaseMessage): string {
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const calls = AIMessage.isInstance(message) && message.tool_calls?.length ? ` calls ${message.tool_calls.map((c) => c.name).join("+")}` : "";
  const snippet = text.length > 48 ? `${text.slice(0, 45)}...` : text;
  return `${message.type}${calls}${snippet ? `: ${snippet}` : ""}`;
}
