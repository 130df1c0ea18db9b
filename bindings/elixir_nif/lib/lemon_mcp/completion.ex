defmodule LemonMCP.Completion do
  @moduledoc false
  # The completion of a call a client's or a host's process started
  # ({:lmcp_done, id, status, payload}): one place for both, so that their
  # replies cannot drift. pending maps a call id to {from, kind}; records
  # holds the calls' telemetry records by id.

  alias LemonMCP.{Error, Telemetry}

  # Replies to the caller of call id: :unknown when it is not pending,
  # otherwise {kind, reply, pending, records} without it.
  def done(pending, records, id, status, payload, state) do
    case Map.pop(pending, id) do
      {nil, _} ->
        :unknown

      {{from, kind}, pending} ->
        {record, records} = Map.pop(records, id)
        reply = Error.done_reply(status, payload, state)
        GenServer.reply(from, reply_for(kind, reply, record, status, payload))
        {kind, reply, pending, records}
    end
  end

  # A :recorded caller (LemonMCP.Telemetry.span/5) gets the call's record
  # with its reply or, for a call the library failed before any record,
  # the error's own type (the core's, from its error object).
  def reply_for(:recorded, reply, record, status, info),
    do: Telemetry.with_record(reply, record || Telemetry.failed_record(status, info))

  def reply_for(_kind, reply, _record, _status, _info), do: reply
end
