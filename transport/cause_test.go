package transport

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCausesAreInTheHeader: the header is the bindings' one source of the
// cause codes, so it lists each one the library gives.
func TestCausesAreInTheHeader(t *testing.T) {
	header, err := os.ReadFile("../include/lemonmcp.h")
	require.NoError(t, err)
	for _, cause := range []string{CauseExecutableNotFound, CauseNotExecutable, CauseWorkingDirectory} {
		t.Run(cause, func(t *testing.T) {
			require.Contains(t, string(header), `"`+cause+`"`)
		})
	}
}
