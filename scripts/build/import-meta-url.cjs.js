// Injected by scripts/build/build.mjs into the CommonJS build of modules that read `import.meta.url`:
// the URL of the CommonJS file itself, as `import.meta.url` is the URL of the ES module.
export const __importMetaUrl = require("node:url").pathToFileURL(__filename).href
