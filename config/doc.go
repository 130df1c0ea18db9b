// Package config turns the JSON configuration a host gives lmcp_client_new
// into core.Options and a transport. Every field is type-checked, defaults
// are filled in, and unknown fields are errors that name the field's path
// (e.g. "config.transport.comand: is not a known field"), so a typo never
// silently changes behaviour. Error messages never echo field values.
package config
