defmodule LemonMCP.StartTest do
  # Start failures (seed stdio_test.exs, items 25 and 26): structured errors,
  # no raise, and no exit signal for the caller to trap.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  defp refute_exit do
    refute_received {:EXIT, _, _}
  end

  setup do
    Process.flag(:trap_exit, true)
    :ok
  end

  test "an empty command" do
    assert {:error, {:invalid_command, "command cannot be empty"}} = Client.start_link(command: "")
    assert {:error, {:invalid_command, "command cannot be empty"}} = Client.start_link(command: "   ")
    assert {:error, {:invalid_command, "command cannot be empty"}} = Client.start_link([])
    refute_exit()
  end

  test "a command that is not a string" do
    assert {:error, {:invalid_command, "command must be a string"}} = Client.start_link(command: 42)
    assert {:error, {:invalid_command, "command must be a string"}} = Client.start_link(command: ~c"echo")
    refute_exit()
  end

  test "an unknown executable" do
    assert {:error, {:invalid_command, "Executable not found: lemonmcp-no-such-server"}} =
             Client.start_link(command: "lemonmcp-no-such-server")

    assert {:error, {:invalid_command, msg}} = Client.start_link(command: "/nonexistent/dir/server")
    assert msg =~ "Executable not found"
    refute_exit()
  end

  test "a registered name is released when the start fails" do
    name = :"failed_start_#{System.unique_integer([:positive])}"
    assert {:error, {:invalid_command, _}} = Client.start_link(command: "lemonmcp-no-such-server", name: name)
    assert Process.whereis(name) == nil
    assert {:ok, _} = Client.start_link(command: Fixture.path(), name: name)
  end

  test "invalid options name the option" do
    assert {:error, {:invalid_option, "unknown option :comand"}} = Client.start_link(comand: "x")
    assert {:error, {:invalid_option, msg}} = Client.start_link(command: Fixture.path(), args: [{:a}])
    assert msg =~ "args"
    assert {:error, {:invalid_option, msg}} = Client.start_link(command: Fixture.path(), env: [{"A", {:x}}])
    assert msg =~ "env"
    assert {:error, {:invalid_option, msg}} = Client.start_link(command: Fixture.path(), sampling_handler: fn -> :x end)
    assert msg =~ "sampling_handler"

    assert {:error, {:invalid_option, msg}} =
             Client.start_link(command: Fixture.path(), capabilities: %{sampling: %{x: 1}})

    assert msg =~ "sampling_handler"
    assert {:error, {:invalid_option, msg}} = Client.start_link(command: Fixture.path(), timeout_ms: -1)
    assert msg =~ "config.timeouts.call_ms"
    refute_exit()
  end

  test "the library's own validation comes back as {:invalid_option, msg}" do
    assert {:error, {:invalid_option, msg}} =
             Client.start_link(command: Fixture.path(), protocol_versions: ["1999-01-01"])

    assert msg =~ "protocol"
  end

  test "env, env_inherit and cwd reach the server" do
    dir = System.tmp_dir!()
    c = Fixture.start!(env: [LEMON_TEST_VAR: "v1"], env_inherit: :minimal, cwd: dir)
    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "x"})
  end

  test "HTTP and SSE need the library's HTTP transports" do
    for mod <- [Client.HTTP, Client.SSE] do
      case mod.start_link(url: "http://127.0.0.1:9/mcp", headers: [{"x-k", "v"}], timeout: 2_000) do
        {:error, {:unsupported, msg}} ->
          # This build has no HTTP transport yet.
          refute "streamable_http" in LemonMCP.features()["transports"] and mod == Client.HTTP
          assert msg =~ "not supported"

        {:error, reason} ->
          # A build with HTTP: nothing listens there.
          assert reason != nil
      end
    end

    refute_exit()
  end

  test "OAuth options are validated before anything starts" do
    # (Until the library had OAuth these were {:unsupported, _}; a build
    # without it still answers that: see LemonMCP.Client.Config.)
    url = "http://127.0.0.1:9/mcp"

    bad = [
      [oauth: [client_id: "a", token_auth_method: :kerberos]],
      [oauth: [client_id: "a", flow: :implicit]],
      [oauth: [client_id: "a", colour: :blue]],
      [oauth: %{"client_id" => "a", "nope" => 1}],
      [oauth: [client_id: "a", authorization_code_provider: fn _, _ -> :ok end]],
      [oauth: [client_id: "a", scope: 7]],
      [oauth: [client_id: "a", scopes: ["a", 1]]],
      [oauth: [client_id: 5]],
      [oauth: [client_id: "a", authorization_timeout_ms: 0]],
      [oauth: :yes],
      [oauth: [client_id: "a"], oauth_token_cache: [load: fn _ -> nil end]],
      [oauth: [client_id: "a"], oauth_token_cache: [save: fn -> nil end]],
      [oauth: [client_id: "a"], oauth_token_cache: :disk]
    ]

    for opts <- bad do
      assert {:error, {:invalid_option, msg}} = Client.HTTP.start_link([url: url] ++ opts), inspect(opts)
      assert msg =~ "oauth" or msg =~ "token cache", inspect(opts)
    end

    # The library's own checks surface as invalid options too.
    assert {:error, {:invalid_option, msg}} =
             Client.HTTP.start_link(url: url, oauth: [client_secret: "s"], timeout: 2_000)

    assert msg =~ "client_id"
    assert {:error, {:invalid_option, _}} = Client.start_link(command: Fixture.path(), oauth: [client_id: "a"])
    assert {:error, {:unsupported, _}} = Client.SSE.start_link(url: url, oauth: [client_id: "a"])
    assert {:error, {:invalid_option, _}} = Client.HTTP.start_link(url: "")

    assert {:error, {:invalid_option, "unknown option :command"}} =
             Client.HTTP.start_link(url: "http://x/", command: "y")
  end

  test "a value of the wrong type is named, never shown (it may be a secret)" do
    # Issue 10 item 5: headers, env values and OAuth secrets of the wrong
    # type; whether the binding or the library refuses them, the reason
    # names the option and never carries the value.
    url = "http://127.0.0.1:9/mcp"

    secrets = [
      {:bearer, "s3cret-tuple"},
      ["s3cret-list"],
      %{"v" => "s3cret-map"},
      fn -> "s3cret-fun" end,
      self(),
      12_345_678_901_234
    ]

    for v <- secrets do
      cases =
        [
          {fn -> Client.HTTP.start_link(url: url, headers: [{"authorization", v}], timeout: 2_000) end,
           "headers.authorization"},
          {fn -> Client.HTTP.start_link(url: url, oauth: [client_id: "a", client_secret: v], timeout: 2_000) end,
           "client_secret"},
          {fn -> Client.HTTP.start_link(url: url, oauth: [client_id: "a", refresh_token: v], timeout: 2_000) end,
           "refresh_token"}
        ] ++
          if is_number(v),
            do: [],
            else: [{fn -> Client.start_link(command: Fixture.path(), env: [{"API_KEY", v}]) end, "env.API_KEY"}]

      for {start, field} <- cases do
        assert {:error, reason} = start.()
        text = inspect(reason)
        assert text =~ field, text
        refute text =~ "s3cret", text
        refute text =~ "12345678901234", text
        refute text =~ "#PID", text
      end
    end

    refute_exit()
  end

  # The policy is the library's to check (config/: "config.sampling_policy.x"),
  # the callbacks Elixir's.
  test "sampling_policy is validated before anything starts" do
    bad = [
      [mode: :sometimes],
      [mode: :model],
      [mode: :reviewed_model, delegate: fn _ -> {:ok, %{}} end],
      [mode: :deny, max_tokens: 0],
      [mode: :deny, allowed_models: ["a", 1]],
      [mode: :deny, reviewer: fn -> :approve end],
      [mode: :deny, colour: :blue]
    ]

    for policy <- bad do
      assert {:error, {:invalid_option, msg}} = Client.start_link(command: Fixture.path(), sampling_policy: policy)
      assert msg =~ "sampling_policy", inspect(policy)
    end

    assert {:error, {:invalid_option, msg}} =
             Client.start_link(command: Fixture.path(), sampling_policy: [mode: :deny, colour: :blue])

    assert msg =~ "config.sampling_policy.colour: is not a known field"
    assert {:error, {:invalid_option, _}} = Client.start_link(command: Fixture.path(), sampling_policy: :deny)
  end
end
