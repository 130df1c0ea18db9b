defmodule LemonMCP.ModernTest do
  # The 2026-07-28 era through the Elixir API: resource subscriptions work
  # the same in both eras, and a task-augmented tool call is one call.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  for mode <- ["legacy", "modern"] do
    test "subscribe_resource in the #{mode} era" do
      c = Fixture.start!(protocol_mode: unquote(mode), subscriber: self())
      assert :ok = Client.subscribe_resource(c, "fixture://blob")
      assert {:ok, [%{"text" => "ok"}]} = Client.call_tool(c, "touch", %{"uri" => "fixture://blob"})

      assert_receive {:lemon_mcp, ^c, :notification,
                      %{"method" => "notifications/resources/updated", "params" => %{"uri" => "fixture://blob"}}},
                     5_000

      assert :ok = Client.unsubscribe_resource(c, "fixture://blob")
    end
  end

  test "a task-augmented call completes once with the task's result" do
    c = Fixture.start!(protocol_mode: "modern", protocol_tasks: true)
    assert {:ok, [%{"text" => "lemon"}]} = Client.call_tool(c, "task_echo", %{"text" => "lemon"})
  end

  test "without protocol_tasks a task tool is refused, naming the option" do
    c = Fixture.start!(protocol_mode: "modern")
    assert {:error, {:unsupported, msg}} = Client.call_tool(c, "task_echo", %{"text" => "x"})
    assert msg =~ "protocol.tasks"
  end
end
