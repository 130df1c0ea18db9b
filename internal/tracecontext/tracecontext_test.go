package tracecontext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const validTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestCheckTraceParent(t *testing.T) {
	cases := []struct {
		name, in, problem string
	}{
		{"valid", validTP, ""},
		{"future version with more fields", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", ""},
		{"too short", "00-4bf9-00f0-01", "55 characters"},
		{"uppercase", strings.ToUpper(validTP), "trace id"},
		{"version ff", "ff" + validTP[2:], "version"},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace id"},
		{"zero parent id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "parent id"},
		{"bad separator", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "dashes"},
		{"bad flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", "flags"},
		{"version 00 with trailing text", validTP + "-x", "after its flags"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTraceParent(tc.in)
			if tc.problem == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.problem)
		})
	}
}

func TestClean(t *testing.T) {
	cases := []struct {
		name     string
		in, want Context
		problems int
	}{
		{"all valid", Context{validTP, "congo=t61rcWkgMzE", "userId=alice"}, Context{validTP, "congo=t61rcWkgMzE", "userId=alice"}, 0},
		{"bad traceparent drops tracestate too", Context{"00-bad", "congo=x", "k=v"}, Context{Baggage: "k=v"}, 1},
		{"tracestate alone", Context{TraceState: "congo=x"}, Context{}, 1},
		{"bad tracestate", Context{validTP, "no-equals", ""}, Context{TraceParent: validTP}, 1},
		{"bad baggage", Context{validTP, "", "=v"}, Context{TraceParent: validTP}, 1},
		{"baggage with control character", Context{Baggage: "k=v\n"}, Context{}, 1},
		{"tracestate too long", Context{validTP, "a=" + strings.Repeat("b", 600), ""}, Context{TraceParent: validTP}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := tc.in.Clean()
			require.Equal(t, tc.want, got)
			require.Len(t, problems, tc.problems)
		})
	}
}

func TestAppendMembersAndFromParams(t *testing.T) {
	c := Context{TraceParent: validTP, Baggage: `k=v"q`}
	members := string(AppendMembers(nil, c))
	require.Equal(t, `"traceparent":"`+validTP+`","baggage":"k=v\"q"`, members)
	require.Equal(t, Context{TraceParent: validTP}, FromParams([]byte(`{"_meta":{"traceparent":"`+validTP+`"},"x":1}`)))
	require.Equal(t, Context{}, FromParams([]byte(`{"_meta":{"traceparent":"00-bad"}}`)))
	require.Equal(t, Context{}, FromParams([]byte(`{"_meta":"not an object"}`)))
	require.Equal(t, Context{}, FromParams(nil))
	require.Empty(t, AppendMembers(nil, Context{}))
}
