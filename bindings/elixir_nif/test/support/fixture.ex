defmodule LemonMCP.Test.Fixture do
  @moduledoc false
  # The fixture server (tests/fixtures/mcpfixture, built by `make fixtures`).

  def path do
    p = System.get_env("LEMONMCP_FIXTURE") || Path.expand("../../../../build/fixtures/mcpfixture", __DIR__)

    unless File.exists?(p) do
      raise "the fixture server is not built at #{p} (run `make fixtures`, or set LEMONMCP_FIXTURE)"
    end

    p
  end

  @doc "Starts a ready client of the fixture (linked to the caller)."
  def start!(opts \\ []) do
    {:ok, c} = LemonMCP.Client.start_link(Keyword.merge([command: path()], opts))
    :ok = LemonMCP.Client.await_ready(c, 10_000)
    c
  end

  @doc "The fixture process's OS pid, from its `pid` tool."
  def os_pid(c) do
    {:ok, [%{"text" => text}]} = LemonMCP.Client.call_tool(c, "pid", %{})
    String.to_integer(text)
  end

  def alive?(os_pid), do: File.exists?("/proc/#{os_pid}")

  @doc "Waits up to timeout ms until fun returns true."
  def eventually(fun, timeout \\ 5_000) do
    deadline = System.monotonic_time(:millisecond) + timeout
    wait(fun, deadline)
  end

  defp wait(fun, deadline) do
    cond do
      fun.() ->
        true

      System.monotonic_time(:millisecond) > deadline ->
        false

      true ->
        Process.sleep(20)
        wait(fun, deadline)
    end
  end

  @doc "A fresh temporary file path."
  def tmp_path(name) do
    # The OS pid too: unique_integer restarts with every VM, and a file left
    # by an earlier run (the fixture appends to its log) must never be read.
    Path.join(System.tmp_dir!(), "lemonmcp-#{name}-#{System.pid()}-#{System.unique_integer([:positive])}")
  end
end
