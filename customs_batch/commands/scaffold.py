"""The files ``customs-batch init`` writes: a small project that validates clean.

It uses only IDs of the sandbox's built-in seed, so ``plan`` and ``apply`` against the
embedded ``local`` environment work straight away.
"""

from __future__ import annotations

CONFIG = """\
# customs-batch project settings. Without this file the embedded `local` environment is used.
default_environment: local
# Where the manifests are: what validate, plan and apply read when given no paths, so that
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

TEMPLATE_GROUP = """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata:
  name: my-group
spec:
  name: My road imports
  code: MY-ROAD
  companyId: 1
  DeclarationTemplates:
    - {procedureType: H1, declarationOffice: NL000396, countryOfDestination: NL}
"""

DEPARTURE = """\
apiVersion: customs-batch/v1
kind: DepartureDeclaration
metadata:
  name: my-departure
template: rotterdam
values: {destination_office: DE004073, destination_country: DE}
spec:
  commercialReference: MY-0001
  totalWeight: 125.5
  Consignor: {name: Acme Export BV, eoriNo: NL123456789, countryCode: NL}
  Consignee: {name: Globex GmbH, countryCode: DE, city: Hamburg, street: Kai 1, postcode: "20457"}
  DeclarationItems:
    - description: Steel bolts
      commodityCode: "731815"
      originCountry: NL
      quantity: 100
      grossMass: 125.5
      netWeight: 120.0
      netPrice: 250
      currency: EUR
      packaging:
        - {sequenceNumber: 1, typeOfPackages: PX, quantity: 2, shippingMarks: MY-0001}
"""

PARTY_UPDATE = """\
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata:
  name: my-departure-consignee
spec:
  declarationId: ${ref:DepartureDeclaration/my-departure.declarationId}
  # The departure owns the party fields it writes: this adds one it leaves out.
  Consignee: {eoriNo: DE123456789012345}
"""

MOVEMENT = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: my-arrival
spec:
  shipmentId: shp_9Xc4Rt
  hawbId: hawb_b1
  action: VAH
  quantity: 6
  grossWeightKg: 60.0
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p3
  customsDeclaration:
    source: EXTERNAL
    documentType: X
    declarationType: IM
    declarationNumber: 24NLR1234567890120
"""

HAWB_DEACTIVATION = """\
apiVersion: customs-batch/v1
kind: HawbDeactivation
metadata:
  name: my-hawb-a2
spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a2
"""

EXPORT_CANCELLATION = """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata:
  name: my-cancel-501
spec:
  declarationId: 501
"""

DATA_README = "Spreadsheet exports (CSV or XLSX) that manifests expand over with forEach go here.\n"

FILES: dict[str, str] = {
    "customs-batch.yaml": CONFIG,
    "templates/rotterdam.yaml.j2": TEMPLATE,
    "manifests/template-group.yaml": TEMPLATE_GROUP,
    "manifests/departure.yaml": DEPARTURE,
    "manifests/party-update.yaml": PARTY_UPDATE,
    "manifests/movement.yaml": MOVEMENT,
    "manifests/hawb-deactivation.yaml": HAWB_DEACTIVATION,
    "manifests/export-cancellation.yaml": EXPORT_CANCELLATION,
    "data/README.md": DATA_README,
}
"""Relative path -> text of every file a new project starts with."""
