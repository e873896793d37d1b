/**
 * The support chat: about 115 short user turns with a shop's assistant.
 * In the first turns the customer states who they are: account, two order
 * numbers, postcode, pickup point, loyalty card. Later turns ask about
 * products (`check_stock`), policies (no tool), ask for actions that need a
 * fact the customer stated (`lookup_order` with the order number, a
 * replacement sent to their postcode, loyalty points), and ask back what
 * they said or what an order's tracking number was. When the assistant can
 * no longer see a fact an action needs, it asks the customer again, who
 * repeats it in a turn of its own.
 */
import { z } from "zod/v4";
import { factPlanter } from "../facts";
import { int, pick, prose, randomFor, randomString, seededRandom, sentence } from "../text";
import type { Random } from "../text";
import type { Fact, InfoView, PlanStep, ToolCallSpec, UserTurn, Workload, WorkloadOptions, World } from "../workload";

const PRODUCTS = ["kettle", "desk lamp", "rice cooker", "bread knife", "duvet", "blender", "toaster", "coffee grinder", "floor fan", "bath towel set", "frying pan", "air purifier"];
const COLOURS = ["black", "white", "sage green", "navy", "copper", "grey"];
const POLICIES = ["returns", "warranty claims", "price matching", "gift cards", "international shipping", "installation", "student discounts", "late deliveries"];
const FIRST_NAMES = ["Amira", "Jonas", "Priya", "Tomás", "Mei", "Olu", "Hanna", "Rafael"];

interface Order {
  id: string;
  item: string;
  tracking: string;
}

interface CustomerFact {
  key: string;
  id: string;
  ask: string;
  restatement: string;
}

const SYSTEM_PROMPT = [
  "You are the customer support assistant of an online homeware shop. Be friendly and brief.",
  "Use lookup_order to see an order's status and tracking, check_stock for availability, create_replacement to send a replacement item,",
  "and add_loyalty_points to credit a purchase to a loyalty card. Only act on order numbers, postcodes and card numbers the customer gave you;",
  "if you do not have one, ask the customer for it.",
  prose(seededRandom(13), 1_000),
].join("\n");

function orderRecord(random: Random, order: Order): string {
  const lines = [
    `order: ${order.id}`,
    `status: ${pick(random, ["in transit", "out for delivery", "awaiting dispatch", "delayed at depot"])}`,
    `item: ${order.item} (${pick(random, COLOURS)})`,
    `tracking: ${order.tracking}`,
    `carrier: ${pick(random, ["ParcelNet", "Swiftpost", "DHL", "Evri"])}`,
  ];
  const events = int(random, 8, 20);
  for (let i = 0; i < events; i += 1) lines.push(`event ${i + 1}: ${int(random, 1, 28)} Nov ${String(int(random, 6, 21)).padStart(2, "0")}:${String(int(random, 0, 59)).padStart(2, "0")} ${sentence(random, int(random, 4, 10))}`);
  return lines.join("\n");
}

/** The support workload of `seed`: 115 user turns (30 with `quick`). */
export function supportWorkload(seed: number, options: WorkloadOptions = {}): Workload {
  const total = options.quick ? 30 : 115;
  const random = seededRandom(seed * 4391 + 5);
  const { facts, fact } = factPlanter(random);
  const name = pick(random, FIRST_NAMES);
  const account = fact("AC", "user", "account number");
  const orders: Order[] = [
    { id: fact("OR", "user", "order number"), item: "kettle", tracking: "" },
    { id: fact("OR", "user", "order number"), item: "desk lamp", tracking: "" },
  ];
  for (const order of orders) order.tracking = fact("TR", "tool", "tracking number");
  const postcode = fact("PC", "user", "postcode");
  const pickup = fact("PP", "user", "pickup point");
  const loyalty = fact("LY", "user", "loyalty card");
  const street = `${int(random, 2, 180)} ${pick(random, ["Harbour Lane", "Mill Road", "Quarry Street", "Elm Close", "Station Parade"])}`;
  const customer = new Map<string, CustomerFact>([
    ["user:account", { key: "user:account", id: account, ask: "Could you give me your account number again?", restatement: `My account number is ${account}.` }],
    ["user:order0", { key: "user:order0", id: orders[0]!.id, ask: "Could you tell me the order number of the kettle again?", restatement: `The kettle order is ${orders[0]!.id}.` }],
    ["user:order1", { key: "user:order1", id: orders[1]!.id, ask: "Could you tell me the order number of the lamp again?", restatement: `The lamp order is ${orders[1]!.id}.` }],
    ["user:postcode", { key: "user:postcode", id: postcode, ask: "Which postcode should I send it to?", restatement: `${street}, postcode ${postcode}.` }],
    ["user:pickup", { key: "user:pickup", id: pickup, ask: "Which pickup point would you like?", restatement: `My pickup point is ${pickup}.` }],
    ["user:loyalty", { key: "user:loyalty", id: loyalty, ask: "What is your loyalty card number?", restatement: `My loyalty card is ${loyalty}.` }],
  ]);

  const answer = (extra = ""): PlanStep => ({ needs: [], content: `${extra}${prose(random, int(random, 250, 900))}`.trim(), calls: [] });
  const lookup = (o: number): ToolCallSpec => ({ name: "lookup_order", args: { order_id: orders[o]!.id }, provides: [`order:${o}`] });
  const turns: UserTurn[] = [
    { user: `Hi, I'm ${name}. My account number is ${account}. ${sentence(random, int(random, 6, 14))}`, steps: [answer(`Hello ${name}! `)] },
    { user: `I ordered a kettle last week, order ${orders[0]!.id}. Where is it?`, steps: [{ needs: ["user:order0"], content: "Let me look that up.", calls: [lookup(0)] }, answer()] },
    { user: `I also have a desk lamp on order, ${orders[1]!.id}. Has it shipped?`, steps: [{ needs: ["user:order1"], content: "Checking.", calls: [lookup(1)] }, answer()] },
    { user: `For anything you send me, my address is ${street}, postcode ${postcode}.`, steps: [answer("Noted. ")] },
    { user: `I'd rather collect parcels at pickup point ${pickup} when possible.`, steps: [answer("Understood. ")] },
    {
      user: `My loyalty card is ${loyalty}. Can you add the points for the kettle?`,
      steps: [{ needs: ["user:loyalty", "user:order0"], content: "Adding the points.", calls: [{ name: "add_loyalty_points", args: { card: loyalty, order_id: orders[0]!.id } }] }, answer()],
    },
  ];

  // Scored questions ask for what was last mentioned longest ago (at least 20 turns back), as a customer would come
  // back to it; an action or an answer that shows a fact mentions it again.
  const askable: { fact: string; source: Fact["source"]; text: string; key: string }[] = [
    { key: "postcode", fact: postcode, source: "user", text: "Remind me, what postcode do you have for me?" },
    { key: "order0", fact: orders[0]!.id, source: "user", text: "What was the order number of my kettle again?" },
    { key: "pickup", fact: pickup, source: "user", text: "Which pickup point did I ask for?" },
    { key: "tracking0", fact: orders[0]!.tracking, source: "tool", text: "What's the tracking number of the kettle?" },
    { key: "account", fact: account, source: "user", text: "Can you read me back my account number?" },
    { key: "loyalty", fact: loyalty, source: "user", text: "Which loyalty card did I give you?" },
    { key: "order1", fact: orders[1]!.id, source: "user", text: "And the lamp's order number?" },
    { key: "tracking1", fact: orders[1]!.tracking, source: "tool", text: "What was the lamp's tracking number?" },
  ];
  const lastMention = new Map<string, number>([["account", 0], ["order0", 1], ["tracking0", 1], ["order1", 2], ["tracking1", 2], ["postcode", 3], ["pickup", 4], ["loyalty", 5]]);
  const mention = (...keys: string[]) => keys.forEach((key) => lastMention.set(key, turns.length));
  const policyAnswer = (): PlanStep => answer(`${prose(random, int(random, 600, 1_600))}\n`);
  while (turns.length < total) {
    const roll = random();
    const stale = askable.filter((q) => turns.length - lastMention.get(q.key)! >= 20).sort((x, y) => lastMention.get(x.key)! - lastMention.get(y.key)!);
    if (roll < 0.18 && stale.length > 0) {
      const q = stale[0]!;
      mention(q.key);
      turns.push({ user: q.text, question: { fact: q.fact, source: q.source }, steps: [{ needs: [], content: "", calls: [] }] });
    } else if (roll < 0.25) {
      const o = int(random, 0, 1);
      mention(`order${o}`, `tracking${o}`);
      turns.push({ user: `Any news on my ${orders[o]!.item} order?`, steps: [{ needs: [`user:order${o}`], content: "Let me check.", calls: [lookup(o)] }, answer()] });
    } else if (roll < 0.29) {
      const o = int(random, 0, 1);
      mention(`order${o}`, "postcode");
      turns.push({
        user: `The ${orders[o]!.item} arrived damaged. Please send a replacement to my address.`,
        steps: [
          { needs: [`user:order${o}`, "user:postcode"], content: "Arranging a replacement.", calls: [{ name: "create_replacement", args: { order_id: orders[o]!.id, postcode } }] },
          answer("I'm sorry about that. "),
        ],
      });
    } else if (roll < 0.32) {
      mention("order1", "pickup");
      turns.push({
        user: "Can I collect the lamp at my usual pickup point instead?",
        steps: [{ needs: ["user:pickup", "user:order1"], content: "Changing the delivery.", calls: [{ name: "change_delivery", args: { order_id: orders[1]!.id, pickup_point: pickup } }] }, answer()],
      });
    } else if (roll < 0.68) {
      const product = pick(random, PRODUCTS);
      const sku = String(int(random, 10_000, 99_999));
      turns.push({
        user: `Do you have the ${product} (sku ${sku}) in ${pick(random, COLOURS)}? ${random() < 0.5 ? sentence(random, int(random, 5, 12)) : ""}`.trim(),
        steps: [{ needs: [], content: "Checking stock.", calls: [{ name: "check_stock", args: { sku } }] }, answer()],
      });
    } else {
      turns.push({ user: `What is your policy on ${pick(random, POLICIES)}? ${sentence(random, int(random, 5, 14))}`, steps: [policyAnswer()] });
    }
  }

  return {
    key: "support",
    title: "Support chat",
    seed,
    contextWindow: 16_000,
    systemPrompt: SYSTEM_PROMPT,
    tools: [
      { name: "lookup_order", description: "Look up an order's status and tracking by its order number.", schema: z.object({ order_id: z.string() }) },
      { name: "check_stock", description: "Check the stock of a product by sku, per colour and warehouse.", schema: z.object({ sku: z.string() }) },
      { name: "create_replacement", description: "Send a replacement for an order's item to a postcode.", schema: z.object({ order_id: z.string(), postcode: z.string() }) },
      { name: "change_delivery", description: "Deliver an order to a pickup point instead.", schema: z.object({ order_id: z.string(), pickup_point: z.string() }) },
      { name: "add_loyalty_points", description: "Credit an order's points to a loyalty card.", schema: z.object({ card: z.string(), order_id: z.string() }) },
    ],
    turns,
    facts,
    createWorld: () => supportWorld(seed, orders, customer),
  };
}

function supportWorld(seed: number, orders: readonly Order[], customer: ReadonlyMap<string, CustomerFact>): World {
  return {
    beginTurn() {},
    run(name, args) {
      const random = randomFor(seed, name, JSON.stringify(args));
      switch (name) {
        case "lookup_order": {
          const order = orders.find((o) => o.id === args.order_id);
          return order === undefined ? `No order ${String(args.order_id)} was found.` : orderRecord(random, order);
        }
        case "check_stock": {
          const lines = [`sku ${String(args.sku)}:`];
          for (const colour of COLOURS) {
            for (const depot of ["Leeds", "Bristol", "Glasgow", "Luton"]) {
              if (random() < 0.6) lines.push(`  ${colour}, ${depot}: ${int(random, 0, 140)} in stock, next delivery ${int(random, 1, 28)} Dec, ${sentence(random, int(random, 3, 8))}`);
            }
          }
          lines.push(`  note: ${sentence(random, int(random, 6, 16))}`);
          return lines.join("\n");
        }
        case "create_replacement":
          return `Replacement ${randomString(random, "0123456789", 8)} created for ${String(args.order_id)}, shipping to ${String(args.postcode)}.`;
        case "change_delivery":
          return `Order ${String(args.order_id)} will be delivered to pickup point ${String(args.pickup_point)}.`;
        case "add_loyalty_points":
          return `${int(random, 20, 400)} points credited to ${String(args.card)} for ${String(args.order_id)}.`;
        default:
          return `error: unknown tool ${name}`;
      }
    },
    info(key): InfoView {
      const known = customer.get(key);
      if (known === undefined) throw new RangeError(`support workload: no information ${key}`);
      return { marker: known.id, refetch: { kind: "ask", ask: known.ask, restatement: known.restatement } };
    },
  };
}
