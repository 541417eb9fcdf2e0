export type FamilyValue = {
    value: number;
    labels: Record<string, string | number>;
    metricName?: string;
};
export type Registered = {
    clients: Map<string, EtcdClient>;
    names: string[];
};
/**
 * Adds `client`'s metrics to `registry` (default: prom-client's global `register`). Throws
 * `INVALID_ARGUMENT` if a client of the same name is registered there already (its series would
 * be the same), or if the registry has a metric of an etcdlock family name that is not ours.
 * @param {Client} client
 * @param {Registry} [registry]
 */
export function register(client: EtcdClient, registry?: Registry): void;
/**
 * Takes `client`'s metrics out of `registry` (the families go with the last client). Throws
 * `INVALID_ARGUMENT` if it was not registered there.
 * @param {Client} client
 * @param {Registry} [registry]
 */
export function unregister(client: EtcdClient, registry?: Registry): void;
import { Client as EtcdClient } from "./client.js";
import { Registry } from "prom-client";
