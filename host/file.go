package host

import (
	"errors"
	"io/fs"
	"os"

	"github.com/lemonmcp/lemonmcp/core"
)

// maxConfigFileBytes bounds a config file (a large one is not a config).
const maxConfigFileBytes = 16 << 20

// LoadFile reads and validates the config file at path (opts.File is set
// to it). Every message and warning starts with the path, so a malformed
// file is an error that names it.
func LoadFile(path string, opts LoadOptions) (*Config, *core.Error) {
	if path == "" {
		return nil, core.Errorf(core.StatusInvalidArgument, "the config file path is empty")
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: no such config file", path)
	case err != nil:
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: cannot read the config file (%s)", path, errText(err))
	case info.IsDir():
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: is a directory, not a config file", path)
	case info.Size() > maxConfigFileBytes:
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: the config file is over 16 MiB", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: cannot read the config file (%s)", path, errText(err))
	}
	opts.File = path
	cfg, cerr := ParseConfigWith(raw, opts)
	if cerr != nil {
		return nil, &core.Error{Status: cerr.Status, Message: path + ": " + cerr.Message}
	}
	for i, w := range cfg.Warnings {
		cfg.Warnings[i] = path + ": " + w
	}
	return cfg, nil
}

// errText is an OS error without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
