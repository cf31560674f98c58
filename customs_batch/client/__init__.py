"""The httpx client of the Customs Declaration Service: endpoint map, auth, pagination, errors."""
