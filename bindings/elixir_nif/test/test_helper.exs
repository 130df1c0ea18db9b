Code.require_file("support/fixture.ex", __DIR__)
Code.require_file("support/oauth_fixture.ex", __DIR__)
Code.require_file("support/telemetry_forwarder.ex", __DIR__)
ExUnit.start(timeout: 120_000)
