// Package redact cuts known secret values (configured header and
// environment values, tokens, client secrets) out of text that reaches a
// host: a server may echo them back in an error body or on its output, and
// no message, event or log line may carry them.
package redact
