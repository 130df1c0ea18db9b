# Runs the shared escape script (tests/fixtures/escapes/escapes.sh) as the
# server of one LemonMCP.Host, in a VM of its own, as whichever user runs
# it, and prints what happened as "key value" lines. sandbox_test.exs runs
# it as the test's user and, under setpriv, as nobody: the VM that loads the
# library and starts the server is then itself unprivileged.
#
#   elixir -pa EBIN escapes_worker.exs sandbox|control FIXTURE SCRIPT
#
# "control" runs the server with no sandbox (and, when the environment
# names no helper, no reaper either): every escape must then succeed.

defmodule EscapesWorker do
  alias LemonMCP.Host

  defp find(cmdline) do
    Path.wildcard("/proc/[0-9]*/cmdline")
    |> Enum.find_value(fn path ->
      case File.read(path) do
        {:ok, ^cmdline} -> path |> Path.dirname() |> Path.basename() |> String.to_integer()
        _ -> nil
      end
    end)
  end

  defp eventually(fun, timeout) do
    deadline = System.monotonic_time(:millisecond) + timeout
    wait(fun, deadline)
  end

  defp wait(fun, deadline) do
    cond do
      fun.() -> true
      System.monotonic_time(:millisecond) > deadline -> false
      true -> Process.sleep(10) && wait(fun, deadline)
    end
  end

  defp out(key, value), do: IO.puts("#{key} #{value}")

  def run([mode, fixture, script]) do
    root = Path.join(System.tmp_dir!(), "escapes-#{System.pid()}-#{System.unique_integer([:positive])}")
    token = "300.#{System.unique_integer([:positive])}#{System.pid()}"
    File.mkdir_p!(root)

    try do
      {sandbox, 0} = System.cmd("/bin/sh", [script, "setup", root])
      {:ok, sandbox} = LemonMCP.NIF.decode_json(sandbox)
      {:ok, tcp} = :gen_tcp.listen(0, ip: {127, 0, 0, 1}, active: false)
      {:ok, udp} = :gen_udp.open(0, ip: {127, 0, 0, 1}, active: false)
      {:ok, tcp_port} = :inet.port(tcp)
      {:ok, udp_port} = :inet.port(udp)
      daemon = "sleep\0#{token}\0"

      server = %{
        "command" => "/bin/sh",
        "args" => [script, "try", root, fixture],
        "env" => %{
          "ESCAPES_TCP_PORT" => "#{tcp_port}",
          "ESCAPES_UDP_PORT" => "#{udp_port}",
          "ESCAPES_TOKEN" => token
        },
        "timeouts" => %{"close_grace_ms" => 300, "ready_ms" => 30_000}
      }

      server =
        if mode == "sandbox", do: Map.merge(server, %{"sandboxEnabled" => true, "sandbox" => sandbox}), else: server

      out("uid", System.cmd("id", ["-u"]) |> elem(0) |> String.trim())
      {:ok, h} = Host.start_link(%{"mcpServers" => %{"escapes" => server}})
      out("ready", Host.await_ready(h, 30_000) == :ok)
      {:ok, servers} = Host.servers(h)
      out("namespaces", get_in(servers, ["escapes", "sandbox", "namespaces"]) == true)
      out("echo", match?({:ok, [%{"text" => "served"}]}, Host.call_tool(h, "escapes__echo", %{text: "served"})))
      out("daemon_started", eventually(fn -> find(daemon) != nil end, 30_000))

      for line <- root |> Path.join("allowed/report") |> File.read!() |> String.split("\n", trim: true) do
        out("report", line)
      end

      out("udp_received", match?({:ok, _}, :gen_udp.recv(udp, 0, 0)))
      :ok = Host.close(h)
      out("daemon_gone", eventually(fn -> find(daemon) == nil end, if(mode == "control", do: 0, else: 30_000)))
    after
      # The control's daemon, or one a failed run left: stopped here.
      if pid = find("sleep\0#{token}\0"), do: System.cmd("kill", ["-KILL", "#{pid}"])
      File.rm_rf!(root)
    end
  end
end

EscapesWorker.run(System.argv())
