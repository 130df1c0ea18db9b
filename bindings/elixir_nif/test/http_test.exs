defmodule LemonMCP.HTTPTest do
  # The seed's HTTP items against tests/fixtures/oauthfixture without its
  # bearer check (-no-auth): 8 (tools, resources, prompts over Streamable
  # HTTP), 9 (per-request SSE responses, the Accept, session and protocol
  # version headers) and 18 (legacy HTTP+SSE).
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.OAuthFixture, as: OF

  test "8: Streamable HTTP: ready, info, capabilities, tools, echo, isError, resources, prompts" do
    base = OF.start!(["-no-auth"])
    assert {:ok, c} = Client.HTTP.start_link(url: base <> "/mcp", timeout: 10_000)
    assert Client.HTTP.state(c) == :ready
    assert {:ok, %{name: "lemon-oauth-fixture", version: "1.0.0"}} = Client.HTTP.server_info(c)
    assert {:ok, %{"tools" => _, "resources" => _, "prompts" => _}} = Client.HTTP.server_capabilities(c)
    assert {:ok, %{"transport" => "streamable_http"}} = Client.HTTP.initialize_result(c)

    assert {:ok, tools} = Client.HTTP.list_tools(c)
    assert Enum.map(tools, & &1["name"]) |> Enum.sort() == ["add", "echo", "fail"]
    assert {:ok, [%{"type" => "text", "text" => "hello"}]} = Client.HTTP.call_tool(c, "echo", %{text: "hello"})
    assert {:ok, %{"structuredContent" => %{"text" => "hé"}}} = Client.HTTP.call_tool_result(c, "echo", %{text: "hé"})
    assert {:error, {:tool_error, [%{"text" => "it broke"}]}} = Client.HTTP.call_tool(c, "fail", %{message: "it broke"})

    assert {:ok, resources} = Client.HTTP.list_resources(c)
    assert Enum.map(resources, & &1["uri"]) == ["fixture://item/01", "fixture://item/02", "fixture://item/03"]
    assert {:ok, [%{"text" => "item 02"}]} = Client.HTTP.read_resource(c, "fixture://item/02")

    assert {:ok, prompts} = Client.HTTP.list_prompts(c)
    assert Enum.map(prompts, & &1["name"]) |> Enum.sort() == ["greet", "plain"]

    assert {:ok, %{description: "Greets someone", messages: [%{"content" => %{"text" => "Hello, Ada!"}}]}} =
             Client.HTTP.get_prompt(c, "greet", %{name: "Ada"})

    assert {:error, {:rpc_error, %{code: _}}} = Client.HTTP.get_prompt(c, "greet", %{})
    assert :ok = Client.HTTP.close(c)
    assert Client.HTTP.state(c) == :disconnected
  end

  test "9: per-request SSE responses; Accept on initialize; session id and protocol version after it" do
    base = OF.start!(["-no-auth", "-protocol", "2025-06-18"])
    {:ok, c} = Client.HTTP.start_link(url: base <> "/mcp", timeout: 10_000)
    assert {:ok, %{"protocolVersion" => "2025-06-18"}} = Client.HTTP.initialize_result(c)
    assert {:ok, [_ | _]} = Client.HTTP.list_tools(c)

    [init] = OF.rpc(base, "initialize")
    accept = OF.header(init, "accept")
    assert accept =~ "application/json" and accept =~ "text/event-stream"
    assert init["response_content_type"] =~ "text/event-stream", "the server answered with a per-request SSE stream"
    assert OF.header(init, "mcp-session-id") == nil

    [initialized] = OF.rpc(base, "notifications/initialized")
    [list | _] = OF.rpc(base, "tools/list")
    assert list["response_content_type"] =~ "text/event-stream"
    session = OF.header(initialized, "mcp-session-id")
    assert is_binary(session) and session != ""

    for e <- [initialized, list] do
      assert OF.header(e, "mcp-session-id") == session, e["rpc_method"]
      assert OF.header(e, "mcp-protocol-version") == "2025-06-18", e["rpc_method"]
    end
  end

  test "9b: JSON responses work the same" do
    base = OF.start!(["-no-auth", "-json-response"])
    {:ok, c} = Client.HTTP.start_link(url: base <> "/mcp", timeout: 10_000)
    assert {:ok, [%{"text" => "j"}]} = Client.HTTP.call_tool(c, "echo", %{text: "j"})
    assert [%{"response_content_type" => "application/json" <> _}] = OF.rpc(base, "tools/call")
  end

  test "18: legacy HTTP+SSE: endpoint, handshake, info, tools, tool error, resources, prompts, close" do
    base = OF.start!()
    assert {:ok, c} = Client.SSE.start_link(url: base <> "/sse", timeout: 10_000)
    assert Client.SSE.state(c) == :ready
    assert {:ok, %{name: "lemon-oauth-fixture"}} = Client.SSE.server_info(c)
    assert {:ok, %{"tools" => _}} = Client.SSE.server_capabilities(c)
    assert {:ok, tools} = Client.SSE.list_tools(c)
    assert "echo" in Enum.map(tools, & &1["name"])
    assert {:ok, [%{"text" => "over sse"}]} = Client.SSE.call_tool(c, "echo", %{text: "over sse"})
    assert {:error, {:tool_error, [%{"text" => "no"}]}} = Client.SSE.call_tool(c, "fail", %{message: "no"})
    assert {:ok, [_, _, _]} = Client.SSE.list_resources(c)
    assert {:ok, [%{"text" => "item 01"}]} = Client.SSE.read_resource(c, "fixture://item/01")
    assert {:ok, [_, _]} = Client.SSE.list_prompts(c)
    assert {:ok, %{messages: [_]}} = Client.SSE.get_prompt(c, "plain")

    [stream | _] = OF.log(base, "/sse")
    assert stream["method"] == "GET"
    assert OF.header(stream, "accept") =~ "text/event-stream"
    assert Enum.any?(OF.log(base, "/sse"), &(&1["method"] == "POST"))

    assert :ok = Client.SSE.close(c)
    assert Client.SSE.state(c) == :disconnected
  end
end
