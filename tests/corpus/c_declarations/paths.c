/* The network paths: a driver's ops table at file scope, a NAPI poll given
 * to netif_napi_add(), a protocol's sendmsg and recvmsg, and the stores
 * they reach. */
struct outer { int a; struct inner in; };
struct inner { unsigned long stamp; int state; };

static void drv_tx_queue(struct outer *o)
{
	WRITE_ONCE(o->in.stamp, jiffies);
	o->a++;
}

static netdev_tx_t drv_xmit(struct sk_buff *skb, struct outer *o)
{
	drv_tx_queue(o);
	return NETDEV_TX_OK;
}

static int drv_poll(struct napi_struct *napi, int budget)
{
	struct outer *o = container_of(napi, struct outer, napi);

	if (READ_ONCE(o->in.state))
		WRITE_ONCE(o->in.stamp, 0);
	return budget;
}

static int drv_probe(struct outer *o)
{
	netif_napi_add_weight(o->dev, &o->napi, drv_poll, 64);
	return 0;
}

static const struct net_device_ops drv_ops = {
	.ndo_open = drv_open,
	.ndo_start_xmit = drv_xmit,
	.nested = { .sendmsg = proto_sendmsg, .recvmsg = proto_recvmsg },
};
