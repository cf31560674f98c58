"""The files ``customs-batch init`` writes: a small project that validates clean.

It uses only IDs of the sandbox's built-in seed, so ``plan`` and ``apply`` against the
embedded ``local`` environment work straight away.
"""

from __future__ import annotations

from customs_batch.kinds.registry import KINDS

CONFIG = """\
# customs-batch project settings. Without this file the embedded `local` environment is used.
default_environment: local
# Where the manifests are: what validate, render, plan and apply read when given no paths, so that
# other YAML files of the repository (workflows, docker-compose.yml) are never read as manifests.
manifests: [manifests]

# A remote environment: uncomment it, export the key, then pass `--env sandbox`.
# The API key is read from the environment variable, never from this file.
# environments:
#   sandbox:
#     base_url: https://sandbox.customs.example
#     api_key_env: CUSTOMS_SANDBOX_KEY
#     rate_limit: 100/minute
#     parallelism: 4
"""

TEMPLATE = """\
{#- Defaults for transit departures leaving Rotterdam; values: destination_office,
    destination_country. -#}
type: DEPARTURE
companyId: 1
procedureType: D1
declarationType: externalTransit
additionalDeclarationType: STANDARD
departureOffice: NL000396
destinationOffice: {{ values.destination_office }}
countryOfDispatch: NL
countryOfDestination: {{ values.destination_country }}
security: "0"
goodsLocationType: A
goodsLocationAddressType: Z
goodsLocationAddress:
  Address: {street: Europaweg 875, city: Rotterdam, postCode: 3199 LC, countryCode: NL}
loadingCountry: NL
loadingLocation: Rotterdam
loadingUNLocode: NLRTM
Principal: {name: Acme Export BV, eoriNo: NL123456789, countryCode: NL}
DeclarationGuarantees:
  - {guaranteeType: "1", guaranteeReferenceNumber: 24NL0000000000017, guaranteeAmount: 5000,
     currencyCode: EUR, accessCode: "1234"}
"""

DATA_README = "Spreadsheet exports (CSV or XLSX) that manifests expand over with forEach go here.\n"


def files() -> dict[str, str]:
    """Relative path -> text of every file a new project starts with: the settings, the
    template, one example document of every kind (its module's ``EXAMPLE``, in the order of
    ``Kind``) and the data folder's README."""
    examples = {f"manifests/{m.example.file}.yaml": m.example.text for m in KINDS.values()}
    return {
        "customs-batch.yaml": CONFIG,
        "templates/rotterdam.yaml.j2": TEMPLATE,
        **examples,
        "data/README.md": DATA_README,
    }
