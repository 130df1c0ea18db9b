defmodule LemonMCP.ServeTest do
  # LemonMCP.Host.serve/2 (docs/gateway.md): the host served over
  # Streamable HTTP, reached by LemonMCP's own HTTP client as a front
  # client; a fixture server's sampling request goes to that front client
  # and its answer comes back; stop_serving/2 ends it; bad arguments are
  # errors naming the problem.
  use ExUnit.Case, async: true

  alias LemonMCP.{Client, Host}
  alias LemonMCP.Test.Fixture

  defp config do
    %{
      # The servers may ask what a front client answers: the gateway
      # relays each request to the front session whose call caused it.
      "defaults" => %{
        "timeouts" => %{"ready_ms" => 10_000, "close_grace_ms" => 300},
        "handlers" => %{"sampling" => %{}, "elicitation" => %{"form" => true}, "roots" => %{}}
      },
      "mcpServers" => %{"fx" => %{"command" => Fixture.path()}, "fy" => %{"command" => Fixture.path()}}
    }
  end

  test "a host served over HTTP: tools, a call, sampling relayed to the front client, stop" do
    {:ok, h} = Host.start_link(config())
    assert :ok = Host.await_ready(h, 15_000)
    assert {:ok, %{url: "http://127.0.0.1:" <> _ = url} = served} = Host.serve(h, http: "127.0.0.1:0")
    assert String.ends_with?(url, "/mcp")
    assert {:error, :timeout} = Host.await_serving(served, 50)

    answer = fn %{"messages" => [%{"content" => %{"text" => t}}]} ->
      {:ok, %{"role" => "assistant", "model" => "front", "content" => %{"type" => "text", "text" => String.upcase(t)}}}
    end

    {:ok, c} = Client.HTTP.start_link(url: url, timeout: 15_000, sampling_handler: answer)
    {:ok, tools} = Client.HTTP.list_tools(c)
    names = Enum.map(tools, & &1["name"])
    assert "fx__echo" in names and "fy__sample" in names
    assert {:ok, [%{"text" => "via the gateway"}]} = Client.HTTP.call_tool(c, "fy__echo", %{text: "via the gateway"})
    assert {:ok, [%{"text" => json}]} = Client.HTTP.call_tool(c, "fx__sample", %{prompt: "loud", max_tokens: 3}, 15_000)
    assert {:ok, %{"content" => %{"text" => "LOUD"}, "model" => "front"}} = LemonMCP.NIF.decode_json(json)
    Client.HTTP.close(c)

    assert :ok = Host.stop_serving(served, 5_000)
    assert {:error, _} = Host.await_serving(served, 0)
    # The host is the application's again.
    assert {:ok, [%{"text" => "mine"}]} = Host.call_tool(h, "fx__echo", %{text: "mine"})
    Host.stop(h)
  end

  test "bad arguments are errors naming the problem" do
    {:ok, h} = Host.start_link(%{"mcpServers" => %{"fx" => %{"command" => Fixture.path()}}})
    assert {:error, {:invalid_argument, msg}} = Host.serve(h, [])
    assert msg =~ "http:"
    assert {:error, {:invalid_argument, msg}} = Host.serve(h, http: "127.0.0.1:0", options: %{"no_such_option" => 1})
    assert msg =~ "no_such_option"
    assert {:error, {:policy_denied, %{"message" => msg}}} = Host.serve(h, http: "0.0.0.0:0")
    assert msg =~ "0.0.0.0"
    Host.stop(h)
  end
end
