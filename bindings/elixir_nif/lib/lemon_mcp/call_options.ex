defmodule LemonMCP.CallOptions do
  @moduledoc false
  # The per-call options of a client's and a host's calls, written once so
  # that a host's call takes every option a client's takes: the library's
  # options object (docs/call-options.md) from a keyword list. The library
  # checks the values and names a bad one.

  @keys [
    all_pages: "all_pages",
    progress: "progress",
    meta: "_meta",
    wait_ready: "wait_ready",
    task: "task",
    trace: "trace",
    no_cache: "no_cache",
    verify: "verify",
    reset_timeout_on_progress: "reset_timeout_on_progress",
    max_total_ms: "max_total_ms",
    fail_if_restarting: "fail_if_restarting"
  ]

  @doc false
  # The options object: `base` (the timeout, as each caller decides it)
  # with every option given in `opts`.
  def to_json(opts, base) do
    Enum.reduce(@keys, base, fn {key, member}, acc ->
      case opts[key] do
        nil -> acc
        value -> Map.put(acc, member, value)
      end
    end)
  end
end
