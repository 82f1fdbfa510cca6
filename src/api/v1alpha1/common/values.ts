/**
 * Enumerations the API declares that code outside the schemas also checks (the IR validation on
 * the serving thread): kept free of the schema builder so importing them does not load TypeBox.
 */

/** The identity providers a JWKS or MCP authentication can name (VENDORS.md idp_*), selecting OAuth metadata quirks. */
export const IDP_VALUES = ['idp_1', 'idp_2', 'idp_3', 'idp_4', 'idp_5', 'idp_6'] as const;

/** Claims a signed JWT's `claims` may not set: the gateway sets them. */
export const RESERVED_JWT_CLAIMS = ['iat', 'exp', 'nbf'] as const;
