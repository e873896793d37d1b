/**
 * Wraps text at word boundaries, for the examples' printed output: a line
 * holds as many whole words as fit in `width`; a single word longer than that
 * stands alone on its line, whole, rather than being cut.
 */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((part) => part.length > 0)) {
    if (line === "") line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}
