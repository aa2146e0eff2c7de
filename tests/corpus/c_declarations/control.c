/* The control path across calls: helpers only netlink handlers call,
 * callbacks given to INIT_WORK() or assigned, an iterator's callback,
 * ops tables at file scope. */
struct net_device { int gro_max_size; int mtu; spinlock_t lock; };
struct netdev_queue { unsigned long trans_start; struct net_device *dev; };
struct work_struct { int pending; };

static inline void netif_set_gro_max_size(struct net_device *dev, int size)
{
	WRITE_ONCE(dev->gro_max_size, size);
}

static void transition_one_qdisc(struct net_device *dev,
				 struct netdev_queue *q, void *arg)
{
	WRITE_ONCE(q->trans_start, 0);
}

static void reset_task(struct work_struct *w) { }

void dev_activate(struct net_device *dev)
{
	netdev_for_each_tx_queue(dev, transition_one_qdisc, NULL);
	transition_one_qdisc(dev, NULL, NULL);
}

static int do_setlink(struct net_device *dev, struct netlink_ext_ack *extack)
{
	struct work_struct *w = &dev->work;

	netif_set_gro_max_size(dev, 65536);
	INIT_WORK(w, reset_task);
	dev->ops->cb = reset_task;
	ASSERT_RTNL();
	dev_activate(dev);
	return 0;
}

static const struct net_device_ops ops = {
	.ndo_open = do_setlink,
	.ndo_start_xmit = { .nested = transition_one_qdisc },
	[0] = reset_task,
};
