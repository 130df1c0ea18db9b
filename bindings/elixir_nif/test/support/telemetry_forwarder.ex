defmodule LemonMCP.Test.TelemetryForwarder do
  @moduledoc false
  # The telemetry module an application names in config
  # (:telemetry_module), as the telemetry tests name it: it forwards every
  # event to the test process registered with listen/0.

  def listen, do: :persistent_term.put({__MODULE__, :pid}, self())

  def stop, do: :persistent_term.erase({__MODULE__, :pid})

  def execute(event, measurements, metadata) do
    case :persistent_term.get({__MODULE__, :pid}, nil) do
      nil -> :ok
      pid -> send(pid, {:event, event, measurements, metadata})
    end
  end
end
