/**
 * What a workload of the agent benchmark is: the user's turns, each with the
 * plan the agent's scripted model works through, the tools, and the world
 * the tools act on. The plan says what the agent does, never what it has in
 * view: before each step the model checks that the information the step
 * needs is visible in the request it received, and fetches it again when it
 * is not (see `agent-model.ts`).
 */
import type { z } from "zod/v4";

/** A tool call of a plan step. */
export interface ToolCallSpec {
  name: string;
  args: Record<string, unknown>;
  /** Information this call's result shows (to recognise the call's result later, offloaded or pruned). */
  provides?: readonly string[];
}

/** One model call of the plan: an AI message with tool calls, or the turn's answer (no calls). */
export interface PlanStep {
  /** Information that must be visible in the request before this step is taken. */
  needs: readonly string[];
  content: string;
  calls: readonly ToolCallSpec[];
}

/** A question at a fixed point: the user asks for a planted fact; the answer is scored. */
export interface Question {
  fact: string;
  /** Where it was planted, for the report. */
  source: "user" | "tool";
}

/** One message of the user and the plan for it. */
export interface UserTurn {
  user: string;
  steps: readonly PlanStep[];
  /** Set on a scored question; its one step is the answer, given from what the request shows. */
  question?: Question;
}

/** How the agent gets a piece of information back: the tool again, or the user, asked in a reply. */
export type Refetch = { kind: "tool"; call: ToolCallSpec } | { kind: "ask"; ask: string; restatement: string };

/** A piece of information as the world has it now: the text that shows it, and how to get it again. */
export interface InfoView {
  /** Visible when the request's text contains this. */
  marker: string;
  refetch: Refetch;
}

/** The environment of one run: files, test state, search index, orders. */
export interface World {
  /** Runs tool `name`: its result text. */
  run(name: string, args: Record<string, unknown>): string;
  /** What shows information `key` now (a file's current content hash) and how to get it again. */
  info(key: string): InfoView;
  /** The user's turn `index` begins (failing tests appear between requests). */
  beginTurn(index: number): void;
}

/** A tool's name, description and argument schema, as the agent binds it. */
export interface ToolDef {
  name: string;
  description: string;
  schema: z.ZodObject;
}

/** A planted identifier. */
export interface Fact {
  id: string;
  source: "user" | "tool";
  /** What it is, for the report ("error code", "order number"). */
  label: string;
}

export type WorkloadKey = "coding" | "research" | "support" | "analyst";

/** One workload of one seed. */
export interface Workload {
  key: WorkloadKey;
  title: string;
  seed: number;
  contextWindow: number;
  systemPrompt: string;
  tools: readonly ToolDef[];
  turns: readonly UserTurn[];
  facts: readonly Fact[];
  /** A fresh world (each run has its own). */
  createWorld(): World;
}

/** Options shared by the workload builders. */
export interface WorkloadOptions {
  /** A shorter run, for development (`--quick`). */
  quick?: boolean;
}
