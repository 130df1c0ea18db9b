defmodule LemonMCP.HostConfigTest do
  # LemonMCP.Host and the config files other applications write
  # (tests/configs: Claude Desktop, Claude Code, Cursor, VS Code, Cline, Roo
  # Code, Windsurf): each loads with its warnings logged once, strict refuses
  # them, a malformed file names itself, and a server that failed to start is
  # logged with why.
  use ExUnit.Case, async: true

  import ExUnit.CaptureLog

  alias LemonMCP.{Host, NIF}
  alias LemonMCP.Test.Fixture

  @configs Path.expand("../../../tests/configs", __DIR__)

  defp corpus do
    {:ok, %{"files" => files}} = NIF.decode_json(File.read!(Path.join(@configs, "expected.json")))
    files
  end

  test "the corpus of config files loads with its warnings" do
    for entry <- corpus() do
      path = Path.join(@configs, entry["path"])
      want = Enum.map(entry["warnings"], &"#{path}: #{&1}")
      # lazy: nothing in these files is started
      opts = [inputs: entry["inputs"] || %{}, start: "lazy"]

      log =
        capture_log(fn ->
          {:ok, h} = Host.start_link(path, opts)
          assert Host.warnings(h) == want, entry["path"]
          {:ok, servers} = Host.servers(h)
          assert Map.new(servers, fn {n, s} -> {n, s["enabled"]} end) == entry["servers"]
          Host.stop(h)
        end)

      for w <- want, do: assert(length(String.split(log, w)) == 2, "logged once: #{w}")

      if want != [] do
        Process.flag(:trap_exit, true)
        assert {:error, {:invalid_argument, msg}} = Host.start_link(path, opts ++ [strict: true])
        assert msg =~ "refused under \"strict\""
      end
    end
  end

  test "a malformed file and an input without a value are errors naming them" do
    Process.flag(:trap_exit, true)
    bad = Path.join(System.tmp_dir!(), "lmcp-ex-#{System.pid()}-bad.json")
    File.write!(bad, "{\"mcpServers\": {\n")
    on_exit(fn -> File.rm(bad) end)
    assert {:error, {:invalid_argument, msg}} = Host.start_link(bad)
    assert msg =~ bad and msg =~ "not valid JSON"

    vscode = Path.join(@configs, "vscode/.vscode/mcp.json")
    assert {:error, {:invalid_argument, msg}} = Host.start_link(vscode, start: "lazy")
    assert msg =~ "${input:github-token}" and msg =~ vscode
  end

  test "a string is a path whatever its name; a JSON text is tagged" do
    # The argument's form says which it is, never its first character: a
    # file named "{project}.json" was taken for a JSON text.
    Process.flag(:trap_exit, true)
    dir = Path.join(System.tmp_dir!(), "lmcp-ex-#{System.pid()}-braced")
    File.mkdir_p!(dir)
    on_exit(fn -> File.rm_rf(dir) end)
    text = ~s({"mcpServers": {"a": {"command": "x"}}})
    braced = Path.join(dir, "{project}.json")
    File.write!(braced, text)

    for config <- [braced, {:json, text}] do
      {:ok, h} = Host.start_link(config, start: "lazy")
      {:ok, servers} = Host.servers(h)
      assert Map.keys(servers) == ["a"], inspect(config)
      Host.stop(h)
    end

    assert {:error, {:invalid_argument, msg}} = Host.start_link(text, start: "lazy")
    assert msg =~ "no such config file" and msg =~ text
    assert {:error, {:invalid_argument, msg}} = Host.start_link({:json, "[1]"})
    assert msg =~ "must be a JSON object"
  end

  test "an invalid server's error names its misspelt member" do
    Process.flag(:trap_exit, true)
    assert {:error, {:invalid_argument, msg}} = Host.start_link(%{"mcpServers" => %{"x" => %{"comand" => "python3"}}})
    assert msg =~ "config.mcpServers.x: needs \"command\""
    assert msg =~ "config.mcpServers.x.comand: is not a member LemonMCP knows (did you mean \"command\"?)"
  end

  test "a server that failed to start is logged with why" do
    config = %{
      "mcpServers" => %{
        "good" => %{"command" => Fixture.path()},
        "dying" => %{
          "command" => "/bin/sh",
          "args" => ["-c", "echo 'Error: GITHUB_TOKEN is not set' >&2; exit 1"],
          "restart" => false
        },
        "missing" => %{"command" => "/nonexistent/lmcp-ex-server"}
      }
    }

    log =
      capture_log(fn ->
        {:ok, h} = Host.start_link(config)
        assert :ok = Host.await_ready(h, 15_000)
        assert {:error, _} = Host.call_tool(h, "missing__echo", %{text: "x"})
        # a second wait logs nothing new
        assert :ok = Host.await_ready(h, 15_000)
        Host.stop(h)
      end)

    assert length(String.split(log, "server \"missing\" failed to start")) == 2
    assert log =~ "executable not found: /nonexistent/lmcp-ex-server"
    assert log =~ "server \"dying\" failed to start"
    refute log =~ "server \"good\""
  end

  test "await_ready is the failure when every enabled server failed" do
    config = %{
      "mcpServers" => %{
        "dying" => %{"command" => "/bin/sh", "args" => ["-c", "exit 1"], "restart" => false},
        "missing" => %{"command" => "/nonexistent/lmcp-ex-server"}
      }
    }

    capture_log(fn ->
      {:ok, h} = Host.start_link(config)
      # "dying" comes first by name: it exited, the connection closed.
      assert {:error, :connection_closed} = Host.await_ready(h, 15_000)
      Host.stop(h)
    end)

    capture_log(fn ->
      {:ok, h} = Host.start_link(%{"mcpServers" => %{"missing" => config["mcpServers"]["missing"]}})
      assert {:error, {name, message}} = Host.await_ready(h, 15_000)
      assert {name, message =~ "every enabled server failed: missing: executable not found"} == {:transport_error, true}
      Host.stop(h)
    end)
  end

  test "a lazy host starts a server on its first call" do
    config = %{"mcpServers" => %{"a" => %{"command" => Fixture.path()}, "b" => %{"command" => Fixture.path()}}}
    {:ok, h} = Host.start_link(config, start: "lazy")
    assert :ok = Host.await_ready(h, 15_000)
    {:ok, servers} = Host.servers(h)
    assert servers["a"]["state"] == "new" and servers["b"]["state"] == "new"
    assert {:ok, [%{"text" => "hi"}]} = Host.call_tool(h, "a__echo", %{text: "hi"})
    {:ok, servers} = Host.servers(h)
    assert servers["a"]["state"] == "ready" and servers["b"]["state"] == "new"
    Host.stop(h)
  end
end
