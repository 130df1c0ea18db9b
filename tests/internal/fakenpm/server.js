#!/usr/bin/env node
// A tiny stdio MCP server, the whole of the package fakenpm serves: it
// answers initialize (its version says which Node runs it), ping,
// tools/list and tools/call for one tool, echo.
'use strict'
const readline = require('readline')
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n')
readline.createInterface({ input: process.stdin })
  .on('line', (line) => {
    let m
    try { m = JSON.parse(line) } catch { return }
    if (m.id === undefined || m.id === null) return
    const reply = (result) => send({ jsonrpc: '2.0', id: m.id, result })
    const params = m.params || {}
    switch (m.method) {
      case 'initialize':
        return reply({ protocolVersion: params.protocolVersion, capabilities: { tools: {} },
          serverInfo: { name: 'lemonmcp-fake-npm-server', version: '1.0.0+node' + process.versions.node } })
      case 'ping':
        return reply({})
      case 'tools/list':
        return reply({ tools: [{ name: 'echo', description: 'Echoes text',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] })
      case 'tools/call':
        return reply({ content: [{ type: 'text', text: String((params.arguments || {}).text) }] })
      default:
        return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found' } })
    }
  })
  .on('close', () => process.exit(0))
