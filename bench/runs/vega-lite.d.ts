// The repository's `moduleResolution: "node"` does not read vega-lite's `exports` map; point it at the types it ships.
declare module "vega-lite" {
  export { compile } from "vega-lite/build/index";
  export type { TopLevelSpec } from "vega-lite/build/index";
}
