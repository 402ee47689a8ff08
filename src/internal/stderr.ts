/**
 * A bounded tail of the CLI's stderr, kept for error messages.
 *
 * @internal
 */

/** @internal */
export class StderrTail {
  private lines: Array<string> = []
  private size = 0

  constructor(readonly maxChars: number) {}

  append(line: string): void {
    this.lines.push(line)
    this.size += line.length + 1
    while (this.size > this.maxChars && this.lines.length > 1) {
      const dropped = this.lines.shift()
      this.size -= (dropped?.length ?? 0) + 1
    }
  }

  get(): string {
    const text = this.lines.join("\n")
    return text.length > this.maxChars ? text.slice(text.length - this.maxChars) : text
  }
}
