/**
 * The speed-device benchmark (bench/devices.ts) measures each device against
 * src with that device replaced by plain code, by editing a copy of src. An
 * edit that no longer applies (the code it names moved or was renamed) must
 * fail here rather than measure the device against itself.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEVICES, editedSources } from "../../bench/devices";

describe("bench/devices.ts: each device's plain version", () => {
  test.each(DEVICES.filter((device) => device.edits.length > 0).map((device) => [device.name, device] as const))("%s: its edits apply to src and change it", (_name, device) => {
    const edited = editedSources(device.edits);
    expect(edited.size).toBeGreaterThan(0);
    for (const [file, text] of edited) expect(text).not.toBe(readFileSync(join(__dirname, "../../src", file), "utf8"));
  });

  test("an edit whose text is not in the file is refused", () => {
    expect(() => editedSources([{ file: "messages/layout.ts", from: "no such text in the layout", to: "" }])).toThrow(/does not apply once in src\/messages\/layout\.ts/);
  });

  test("the control and the cache row change no source; every other row does", () => {
    const unedited = DEVICES.filter((device) => device.edits.length === 0).map((device) => device.name);
    expect(unedited).toEqual(["none (control)", "count cache"]);
    expect(DEVICES.find((device) => device.name === "count cache")!.noCache).toBe(true);
  });
});
