"""The sandbox emulator of the Customs Declaration Service: app, store, seed, faults."""
