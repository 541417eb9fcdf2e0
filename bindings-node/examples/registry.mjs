// ES module: register this process as an instance of a service, and follow the service's
// instances; run with ETCDLOCK_ENDPOINTS set.
import { Client, grpcEndpoint, grpcEndpointAddr } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });
const service = 'readme/svc/api'; // instances are the keys readme/svc/api/<instance>

const discovery = client.discover(service); // sends nothing until iterated
const { value: current } = await discovery.next(); // the current set first
console.log(`instances before: ${current.instances.length}`);

// readme/svc/api/node-1 on a lease of its own (10 s), kept alive, and registered again if the
// lease or the key is lost, until close(). The value is what Go's gRPC resolver reads
// (etcd:///readme/svc/api); any string or Buffer will do.
const reg = await client.register(service, 'node-1', grpcEndpoint('10.0.0.7:50051'), { ttl: 10 });
reg.onLost((reason) => console.error(`node-1 lost (${reason}), registering again`));
reg.onRestored((leaseId) => console.error(`node-1 registered again, lease ${leaseId.toString(16)}`));
reg.onTakenOver(() => console.error('node-1 was taken over by another registrant'));

const show = (set) => set.instances.map((i) => `${i.name} -> ${grpcEndpointAddr(i.value)}`).join(', ');
for await (const set of discovery) {
  // The whole set after each change, in name order, at set.revision.
  console.log(`instances: ${show(set)}`);
  if (set.instances[0].value.toString() === grpcEndpoint('10.0.0.7:50051')) {
    await reg.update(grpcEndpoint('10.0.0.7:50052')); // the next set shows it
  } else {
    break; // leaves the loop and closes the discovery
  }
}

await reg.close(); // deletes the key and revokes the lease (`await using` does it too)
console.log(`instances after close: ${(await client.instances(service)).instances.length}`);
await client.close();
