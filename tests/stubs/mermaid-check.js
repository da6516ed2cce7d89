#!/usr/bin/env node
// mermaid-check.js - checks the ```mermaid blocks of Markdown files with Mermaid's own parser
// (the npm package, under jsdom: no browser). Usage: node mermaid-check.js FILE...
// Prints "FILE: N blocks parsed" per file; exits 1 with the parser's message on the first block
// that does not parse (or a file without a block when --require-block is given), 2 on a usage
// error. Used by tests/e2e/test_step_summary.py.
'use strict';

const fs = require('fs');

// The ```mermaid ... ``` blocks of text, with the line each starts on.
function blocks(text) {
    const out = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
        if (lines[i].trim() !== '```mermaid')
            continue;
        const start = i + 2; // the block's first line, counted from 1
        const body = [];
        for (i++; i < lines.length && lines[i].trim() !== '```'; i++)
            body.push(lines[i]);
        out.push({ line: start, text: body.join('\n') });
    }
    return out;
}

async function main() {
    const args = process.argv.slice(2);
    const require_block = args.includes('--require-block');
    const files = args.filter((a) => a !== '--require-block');
    if (files.length === 0) {
        process.stderr.write('usage: node mermaid-check.js [--require-block] FILE...\n');
        return 2;
    }
    const { JSDOM } = require('jsdom');
    const dom = new JSDOM('<!doctype html><html><body></body></html>');
    globalThis.window = dom.window; // DOMPurify, which mermaid loads, needs a window
    globalThis.document = dom.window.document;
    const { default: mermaid } = await import('mermaid');
    mermaid.initialize({ startOnLoad: false });
    for (const f of files) {
        const found = blocks(fs.readFileSync(f, 'utf8'));
        if (require_block && found.length === 0) {
            process.stderr.write(`${f}: no mermaid block\n`);
            return 1;
        }
        for (const b of found) {
            try {
                await mermaid.parse(b.text);
            } catch (e) {
                process.stderr.write(`${f}:${b.line}: mermaid: ${e.message || e}\n`);
                return 1;
            }
        }
        process.stdout.write(`${f}: ${found.length} blocks parsed\n`);
    }
    return 0;
}

main().then((rc) => process.exit(rc), (e) => {
    process.stderr.write(`mermaid-check: ${e.stack || e}\n`);
    process.exit(2);
});
